// The simulated lab's spawner: a small process that starts the ramdisk's commands for the lab,
// so the lab (a big node process) never forks. The lab speaks to it over stdin/stdout in the
// framed protocol spawner-protocol.ts describes; each command's stdio are unix sockets connected
// straight to the lab, so no output passes through here. spawner-helpers.ts compiles it on first
// use where a C compiler exists (spawner-worker.ts, in node, is the fallback). Commands start
// with posix_spawn, which glibc runs as clone(CLONE_VM|CLONE_VFORK): no page tables are copied
// and no interpreter is loaded.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct req {
  uint32_t id;
  char *body;     // the frame's NUL-separated fields: the strings below point into it
  char **vec;     // "/bin/sh", file, args..., NULL, env..., NULL (the first slot is for ENOEXEC)
  char **argv;    // vec + 1
  char **envp;
  const char *file, *cwd;
  int streams[2]; // stdin+stdout and stderr sockets to the lab, -1 until connected
  int attempt;
  int64_t due;    // CLOCK_MONOTONIC ms of the next connect attempt
  int kill;       // a signal that arrived before the command started
};

struct cmd {
  uint32_t id;
  pid_t pid; // the command's group leader, unreaped
};

// Node 20 pads an abstract name with NULs to the whole sun_path, and newer libuv may not: the
// first length that connects is kept, as in spawner.pl.
static struct sockaddr_un lab;
static socklen_t lab_len[2];
static int lab_forms, lab_form;

static struct cmd *cmds;
static size_t ncmds, cap_cmds;
static struct req **waiting; // spawns waiting to connect to a busy lab
static size_t nwaiting, cap_waiting;
static char *in, *out; // bytes from the lab not yet parsed; replies not yet written
static size_t in_len, in_cap, out_len, out_cap;
static posix_spawnattr_t attr;
static char *no_env[] = {NULL};

static void *grow(void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return p;
  size_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  p = realloc(p, n * size);
  if (!p) {
    fputs("tsbm-spawner: out of memory\n", stderr);
    _exit(1);
  }
  *cap = n;
  return p;
}

// One frame of NUL-separated fields (NULL ends the list).
static void reply(const char *first, ...) {
  va_list ap;
  size_t len = 0, start = out_len;
  va_start(ap, first);
  for (const char *f = first; f; f = va_arg(ap, const char *)) len += strlen(f) + (f != first);
  va_end(ap);
  out = grow(out, &out_cap, out_len + 4 + len, 1);
  out[start] = (char)(len >> 24), out[start + 1] = (char)(len >> 16);
  out[start + 2] = (char)(len >> 8), out[start + 3] = (char)len;
  out_len += 4;
  va_start(ap, first);
  for (const char *f = first; f; f = va_arg(ap, const char *)) {
    if (f != first) out[out_len++] = '\0';
    memcpy(out + out_len, f, strlen(f));
    out_len += strlen(f);
  }
  va_end(ap);
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void signal_group(pid_t pid, int sig) {
  if (kill(-pid, sig) != 0) kill(pid, sig); // the group may be gone while its leader is not
}

// What node says for a failed spawn: the errno's name.
static const char *errno_name(int e) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
  const char *name = strerrorname_np(e);
  if (name) return name;
#endif
  static char num[16];
  snprintf(num, sizeof num, "%d", e);
  return num;
}

// One stdio socket to the lab, opened by its 5-byte header. Non-blocking connect: a full
// listen backlog says EAGAIN (retried later) instead of stalling every other command.
static int open_stream(uint32_t id, int kind) {
  for (;;) {
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    if (connect(s, (struct sockaddr *)&lab, lab_len[lab_form]) == 0) {
      // The command gets the same open file, and expects blocking stdio.
      fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
      unsigned char head[5] = {(unsigned char)(id >> 24), (unsigned char)(id >> 16), (unsigned char)(id >> 8),
                               (unsigned char)id, (unsigned char)kind};
      ssize_t n = write(s, head, sizeof head);
      if (n == (ssize_t)sizeof head) return s;
      if (n >= 0) errno = EIO;
    }
    int e = errno;
    close(s);
    errno = e;
    if (e != ECONNREFUSED || lab_form + 1 >= lab_forms) return -1;
    lab_form++;
  }
}

static void free_req(struct req *r) {
  for (int k = 0; k < 2; k++)
    if (r->streams[k] >= 0) close(r->streams[k]);
  free(r->vec);
  free(r->body);
  free(r);
}

static void start(struct req *r) {
  char num[2][16];
  snprintf(num[0], sizeof num[0], "%u", (unsigned)r->id);
  for (int k = 0; k < 2; k++) {
    if (r->streams[k] >= 0) continue;
    r->streams[k] = open_stream(r->id, k);
    if (r->streams[k] >= 0) continue;
    if ((errno == EAGAIN || errno == EINTR) && r->attempt < 200) {
      r->due = now_ms() + (r->attempt * 5 > 100 ? 100 : r->attempt * 5);
      r->attempt++;
      waiting = grow(waiting, &cap_waiting, nwaiting + 1, sizeof *waiting);
      waiting[nwaiting++] = r;
      return;
    }
    char msg[128];
    snprintf(msg, sizeof msg, "connect to the lab: %s", strerror(errno));
    reply("e", num[0], msg, NULL);
    free_req(r); // the sockets opened so far close with it
    return;
  }
  // A session (and process group) of its own so a kill reaches the whole pipeline; stdio on
  // the lab's sockets (every other descriptor here is close-on-exec); chdir in the child, so
  // this process keeps its own directory for the commands without one.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, r->streams[0], 0);
  posix_spawn_file_actions_adddup2(&fa, r->streams[0], 1);
  posix_spawn_file_actions_adddup2(&fa, r->streams[1], 2);
  if (*r->cwd) posix_spawn_file_actions_addchdir_np(&fa, r->cwd);
  // posix_spawnp searches the PATH of environ, which for execvp (perl, node) is the command's.
  environ = r->envp;
  pid_t pid;
  int rc = posix_spawnp(&pid, r->file, &fa, &attr, r->argv, r->envp);
  if (rc == ENOEXEC && strchr(r->file, '/')) { // execvp runs a script without #! with sh
    r->vec[0] = "/bin/sh";
    rc = posix_spawn(&pid, "/bin/sh", &fa, &attr, r->vec, r->envp);
  }
  environ = no_env;
  posix_spawn_file_actions_destroy(&fa);
  // The command holds its own copies; the lab sees end of output only when every copy is
  // closed, and must not send stdin before ours are gone (we would never read it).
  close(r->streams[0]);
  close(r->streams[1]);
  r->streams[0] = r->streams[1] = -1;
  if (rc != 0) {
    char msg[4200];
    snprintf(msg, sizeof msg, "spawn %s %s", r->file, errno_name(rc));
    reply("e", num[0], msg, NULL);
  } else {
    cmds = grow(cmds, &cap_cmds, ncmds + 1, sizeof *cmds);
    cmds[ncmds++] = (struct cmd){r->id, pid};
    snprintf(num[1], sizeof num[1], "%d", (int)pid);
    reply("s", num[0], num[1], NULL);
    if (r->kill) signal_group(pid, r->kill);
  }
  free_req(r);
}

static int all_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return 1;
}

static void kill_command(uint32_t id, const char *sig) {
  if (!all_digits(sig)) return;
  int n = atoi(sig);
  for (size_t i = 0; i < ncmds; i++) {
    if (cmds[i].id != id) continue;
    signal_group(cmds[i].pid, n);
    return;
  }
  // Not started yet (waiting for the lab's backlog): it is killed as soon as it starts.
  // Otherwise it has finished and the kill has nothing to do.
  for (size_t i = 0; i < nwaiting; i++)
    if (waiting[i]->id == id) waiting[i]->kill = n;
}

// One frame from the lab; `body` (malloc'd, NUL-terminated at len) is taken over.
static void handle(char *body, size_t len) {
  size_t nf = 1;
  for (size_t i = 0; i < len; i++) nf += body[i] == '\0';
  char **f = malloc((nf + 3) * sizeof *f);
  if (!f) _exit(1);
  f[0] = body;
  for (size_t i = 0, k = 1; i < len; i++)
    if (body[i] == '\0') f[k++] = body + i + 1;
  if (!strcmp(f[0], "k") && nf >= 3) kill_command((uint32_t)strtoul(f[1], NULL, 10), f[2]);
  if (strcmp(f[0], "s") || nf < 5) {
    free(f);
    free(body);
    return;
  }
  // s, id, file, cwd, argc, args..., env...: rebuilt in place as vec (see struct req).
  struct req *r = calloc(1, sizeof *r);
  if (!r) _exit(1);
  size_t argc = strtoul(f[4], NULL, 10);
  if (argc > nf - 5) argc = nf - 5;
  r->id = (uint32_t)strtoul(f[1], NULL, 10);
  r->file = f[2];
  r->cwd = f[3];
  r->body = body;
  r->vec = f;
  r->streams[0] = r->streams[1] = -1;
  r->attempt = 1;
  size_t nenv = nf - 5 - argc;
  memmove(f + 2, f + 5, argc * sizeof *f); // args, then env, after "/bin/sh" and file
  memmove(f + 3 + argc, f + 5 + argc, nenv * sizeof *f);
  f[1] = (char *)r->file;
  f[2 + argc] = NULL;
  f[3 + argc + nenv] = NULL;
  r->argv = f + 1;
  r->envp = f + 3 + argc;
  start(r);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (size_t i = 0; i < ncmds; i++) {
      if (cmds[i].pid != pid) continue;
      char id[16], n[16];
      snprintf(id, sizeof id, "%u", (unsigned)cmds[i].id);
      cmds[i] = cmds[--ncmds];
      if (WIFSIGNALED(status)) {
        snprintf(n, sizeof n, "%d", WTERMSIG(status));
        reply("x", id, "", n, NULL);
      } else {
        snprintf(n, sizeof n, "%d", WEXITSTATUS(status));
        reply("x", id, n, "", NULL);
      }
      break;
    }
  }
}

// The lab went away: nothing of ours may outlive it.
static void lab_gone(void) {
  for (size_t i = 0; i < ncmds; i++) signal_group(cmds[i].pid, SIGKILL);
  exit(0);
}

static void read_lab(void) {
  in = grow(in, &in_cap, in_len + 65536, 1);
  ssize_t n = read(0, in + in_len, 65536);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) lab_gone();
  in_len += (size_t)n;
  size_t at = 0;
  while (in_len - at >= 4) {
    unsigned char *p = (unsigned char *)in + at;
    size_t len = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    if (in_len - at - 4 < len) break;
    char *body = malloc(len + 1);
    if (!body) _exit(1);
    memcpy(body, in + at + 4, len);
    body[len] = '\0';
    at += 4 + len;
    handle(body, len);
  }
  memmove(in, in + at, in_len - at);
  in_len -= at;
}

static void flush(void) {
  size_t at = 0;
  while (at < out_len) {
    ssize_t n = write(1, out + at, out_len - at);
    if (n >= 0) {
      at += (size_t)n;
    } else if (errno == EAGAIN) { // a non-blocking pipe from the lab: wait until it drains
      struct pollfd p = {.fd = 1, .events = POLLOUT};
      poll(&p, 1, -1);
    } else if (errno != EINTR) {
      lab_gone();
    }
  }
  out_len = 0;
}

static void retry_due(void) {
  int64_t now = now_ms();
  size_t n = nwaiting;
  struct req **due = malloc((n ? n : 1) * sizeof *due);
  if (!due) _exit(1);
  size_t ndue = 0, keep = 0;
  for (size_t i = 0; i < n; i++) {
    if (waiting[i]->due <= now) due[ndue++] = waiting[i];
    else waiting[keep++] = waiting[i];
  }
  nwaiting = keep;
  for (size_t i = 0; i < ndue; i++) start(due[i]);
  free(due);
}

static void on_signal(int sig) { (void)sig; } // only to interrupt ppoll

int main(int argc, char **argv) {
  // `@name` is a Linux abstract socket (argv cannot carry its leading NUL byte).
  const char *arg = argc > 1 ? argv[1] : "";
  size_t len = strlen(arg);
  if (!len || isatty(0) || len > sizeof lab.sun_path) {
    fputs("tsbm-spawner: run by the simulated lab only\n", stderr);
    return 2;
  }
  lab.sun_family = AF_UNIX;
  memcpy(lab.sun_path, arg, len);
  if (arg[0] == '@' && len > 1) {
    lab.sun_path[0] = '\0';
    lab_len[lab_forms++] = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    if (len < sizeof lab.sun_path) lab_len[lab_forms++] = (socklen_t)sizeof lab;
  } else {
    lab_len[lab_forms++] = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (len < sizeof lab.sun_path));
  }

  // The lab going away shows up as EPIPE on write, not as a signal that kills us before we
  // kill its commands. SIGCHLD stays blocked except inside ppoll, which it then interrupts:
  // no missed wake-up, and no EINTR anywhere else.
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  sigset_t chld, none;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigemptyset(&none);
  sigprocmask(SIG_BLOCK, &chld, NULL);

  // Every command: its own session, no blocked signals, every signal at its default.
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);

  for (;;) {
    reap();
    flush();
    struct timespec ts, *timeout = NULL;
    if (nwaiting) {
      int64_t first = waiting[0]->due;
      for (size_t i = 1; i < nwaiting; i++)
        if (waiting[i]->due < first) first = waiting[i]->due;
      int64_t ms = first - now_ms();
      if (ms < 0) ms = 0;
      ts.tv_sec = ms / 1000;
      ts.tv_nsec = (ms % 1000) * 1000000;
      timeout = &ts;
    }
    struct pollfd p = {.fd = 0, .events = POLLIN};
    if (ppoll(&p, 1, timeout, &none) > 0) read_lab();
    if (nwaiting) retry_due();
  }
}
