#!/usr/bin/perl
# The simulated lab's spawner where perl is installed (spawner-worker.ts is the node fallback).
# Forking this small process costs about a third of forking a node one, and a lab starts some
# thirty commands per node. The lab speaks to it over stdin/stdout in the framed protocol that
# spawner-protocol.ts describes; each command's stdio are unix sockets connected to the lab, so
# no output passes through here. Only modules from perl-base (Essential on Debian) are used.
use strict;
use warnings;
use POSIX qw(WNOHANG SIG_SETMASK _exit dup2 setsid);
use Socket qw(AF_UNIX SOCK_STREAM pack_sockaddr_un);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);

# `@name` is a Linux abstract socket (argv cannot carry its leading NUL byte).
my $arg = $ARGV[0] // '';
my $address = $arg =~ /^\@(.+)$/s ? "\0$1" : $arg;
if ($address eq '' || -t STDIN) {
  print STDERR "spawner.pl: run by the simulated lab only\n";
  exit 2;
}
# Node 20 pads an abstract name with NULs to the whole sun_path, and newer libuv may not: the
# first form that connects is kept.
my @lab_addrs = (pack_sockaddr_un($address));
push @lab_addrs, pack_sockaddr_un($address . "\0" x (108 - length $address))
  if substr($address, 0, 1) eq "\0" && length $address < 108;
my $ticks_per_s = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;

my %id_of;   # pid => command id, while the command's group leader is unreaped
my %pid_of;  # command id => pid
my @waiting; # spawns waiting to connect to a busy lab: { req, attempt, due (clock ticks) }
my $in = ''; # bytes from the lab not yet parsed
my $out = ''; # replies not yet written

# Handlers that do nothing, not IGNORE: exec resets caught signals to their defaults, so the
# child has nothing to undo. A lab that went away then shows up as EPIPE on write (not as a
# signal that kills us before we kill its commands), and SIGCHLD interrupts select.
$SIG{PIPE} = sub { };
$SIG{CHLD} = sub { };
my $no_signals = POSIX::SigSet->new;
my $home = POSIX::getcwd() // '/'; # for commands without a cwd, as the node spawner does
my $env_now = ''; # the environment %ENV holds now (NUL-joined)

binmode STDIN;
binmode STDOUT;

sub reply {
  my $body = join "\0", @_;
  $out .= pack('N', length $body) . $body;
}

sub now_ticks { return (POSIX::times())[0] }

sub set_blocking {
  my ($fh, $blocking) = @_;
  my $flags = fcntl($fh, F_GETFL, 0) or return;
  fcntl($fh, F_SETFL, $blocking ? $flags & ~O_NONBLOCK : $flags | O_NONBLOCK);
}

# One stdio socket to the lab, opened by its 5-byte header. Non-blocking connect: a full
# listen backlog says EAGAIN (retried later) instead of stalling every other command.
sub open_stream {
  my ($id, $kind) = @_;
  socket(my $s, AF_UNIX, SOCK_STREAM, 0) or return;
  set_blocking($s, 0);
  if (!connect($s, $lab_addrs[0])) {
    return unless $!{ECONNREFUSED} && @lab_addrs > 1;
    shift @lab_addrs;
    return open_stream($id, $kind);
  }
  set_blocking($s, 1); # the command gets the same open file, and expects blocking stdio
  my $n = syswrite($s, pack('NC', $id, $kind));
  return defined $n && $n == 5 ? $s : undef;
}

sub signal_group {
  my ($pid, $sig) = @_;
  kill($sig, -$pid) or kill($sig, $pid); # the group may be gone while its leader is not
}

sub errno_name {
  local $! = shift;
  my ($name) = grep { $!{$_} } keys %!;
  return $name // ($! + 0);
}

# The command's directory and environment are set here, before fork: every page the child
# writes before exec is a copy-on-write fault, and the next command often has the same env.
sub enter {
  my ($req) = @_;
  chdir($req->{cwd} eq '' ? $home : $req->{cwd}) or return;
  my $env = join "\0", @{ $req->{env} };
  if ($env ne $env_now) {
    %ENV = ();
    for (@{ $req->{env} }) {
      my ($k, $v) = split /=/, $_, 2;
      $ENV{$k} = $v // '';
    }
    $env_now = $env;
  }
  return 1;
}

# Runs in the forked child: a session (and process group) of its own so a kill reaches the
# whole pipeline, no blocked signals, stdio on the lab's sockets, then exec. A failure is
# reported to the parent as an errno on $w (close-on-exec, so a successful exec sends EOF).
sub child {
  my ($req, $io, $err, $w) = @_;
  setsid();
  POSIX::sigprocmask(SIG_SETMASK, $no_signals);
  dup2(fileno($io), 0);
  dup2(fileno($io), 1);
  dup2(fileno($err), 2);
  {
    no warnings 'exec'; # the lab reports the failure; stderr is the command's
    exec { $req->{file} } $req->{file}, @{ $req->{args} };
  }
  syswrite($w, pack('N', $! + 0));
  _exit(127);
}

sub start {
  my ($req, $attempt) = @_;
  my $id = $req->{id};
  for my $kind (0, 1) {
    next if $req->{streams}[$kind];
    my $s = open_stream($id, $kind);
    if ($s) {
      $req->{streams}[$kind] = $s;
      next;
    }
    if (($!{EAGAIN} || $!{EINTR}) && $attempt < 200) {
      my $ms = $attempt * 5 > 100 ? 100 : $attempt * 5;
      push @waiting, { req => $req, attempt => $attempt + 1, due => now_ticks() + $ms * $ticks_per_s / 1000 };
      return;
    }
    reply('e', $id, "connect to the lab: $!");
    return; # the sockets opened so far close with $req
  }
  my ($io, $err) = @{ $req->{streams} };
  delete $req->{streams};
  if (!enter($req)) {
    reply('e', $id, "spawn $req->{file} " . errno_name($! + 0)); # what node says for a bad cwd
    return;
  }
  pipe(my $r, my $w) or do { reply('e', $id, "pipe: $!"); return };
  my $pid = fork;
  if (!defined $pid) {
    reply('e', $id, "spawn $req->{file} " . errno_name($! + 0));
    return;
  }
  child($req, $io, $err, $w) if $pid == 0;
  # The command holds its own copies; the lab sees end of output only when every copy is
  # closed, and must not send stdin before ours are gone (we would never read it).
  close $w;
  close $io;
  close $err;
  my $buf = '';
  while (length $buf < 4) {
    my $n = sysread($r, $buf, 4 - length $buf, length $buf);
    next if !defined $n && $!{EINTR};
    last if !$n;
  }
  close $r;
  if (length $buf == 4) {
    waitpid($pid, 0);
    reply('e', $id, "spawn $req->{file} " . errno_name(unpack 'N', $buf));
    return;
  }
  $id_of{$pid} = $id;
  $pid_of{$id} = $pid;
  reply('s', $id, $pid);
  signal_group($pid, $req->{kill}) if $req->{kill};
}

sub kill_command {
  my ($id, $sig) = @_;
  return unless defined $sig && $sig =~ /^[0-9]+$/; # perl dies on a signal name it does not know
  if (my $pid = $pid_of{$id}) {
    signal_group($pid, $sig);
    return;
  }
  # Not started yet (waiting for the lab's backlog): it is killed as soon as it starts.
  # Otherwise it has finished and the kill has nothing to do.
  $_->{req}{kill} = $sig for grep { $_->{req}{id} == $id } @waiting;
}

sub handle {
  my ($type, @f) = @_;
  return unless defined $type;
  if ($type eq 's') {
    my ($id, $file, $cwd, $argc, @rest) = @f;
    my @args = splice @rest, 0, $argc;
    start({ id => $id, file => $file, cwd => $cwd, args => \@args, env => \@rest }, 1);
  } elsif ($type eq 'k') {
    kill_command($f[0], $f[1]);
  }
}

sub reap {
  while ((my $pid = waitpid(-1, WNOHANG)) > 0) {
    my $status = $?;
    my $id = delete $id_of{$pid};
    next unless defined $id;
    delete $pid_of{$id};
    if ($status & 127) { reply('x', $id, '', $status & 127) }
    else { reply('x', $id, $status >> 8, '') }
  }
}

# The lab went away: nothing of ours may outlive it.
sub lab_gone {
  signal_group($_, 'KILL') for keys %id_of;
  exit 0;
}

sub read_lab {
  my $n = sysread(STDIN, $in, 65536, length $in);
  if (!defined $n) {
    return if $!{EINTR} || $!{EAGAIN};
    lab_gone();
  }
  lab_gone() if $n == 0;
  while (length $in >= 4) {
    my $len = unpack 'N', $in;
    last if length $in < 4 + $len;
    my $body = substr $in, 4, $len;
    substr($in, 0, 4 + $len, '');
    handle(split /\0/, $body, -1);
  }
}

sub flush {
  while (length $out) {
    my $n = syswrite(STDOUT, $out);
    if (!defined $n) {
      next if $!{EINTR};
      lab_gone();
    }
    substr($out, 0, $n, '');
  }
}

sub retry_due {
  my $now = now_ticks();
  my @due = grep { $_->{due} <= $now } @waiting;
  return unless @due;
  @waiting = grep { $_->{due} > $now } @waiting;
  start($_->{req}, $_->{attempt}) for @due;
}

while (1) {
  reap();
  flush();
  my $timeout;
  if (@waiting) {
    my ($first) = sort { $a <=> $b } map { $_->{due} } @waiting;
    my $t = ($first - now_ticks()) / $ticks_per_s;
    $timeout = $t > 0 ? $t : 0;
  }
  # A SIGCHLD that lands just before select blocks does not interrupt it: while commands run,
  # wake now and then to reap anyway.
  $timeout = 0.05 if %id_of && (!defined $timeout || $timeout > 0.05);
  my $rin = '';
  vec($rin, fileno(STDIN), 1) = 1;
  my $nfound = select(my $rout = $rin, undef, undef, $timeout);
  read_lab() if $nfound > 0;
  retry_due() if @waiting;
}
