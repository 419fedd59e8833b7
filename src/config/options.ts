// Every setting tsbm reads from its project config file (tsbm.cfg, found as Ansible finds
// ansible.cfg: src/config/find.ts) and from TSBM_* environment variables, declared once: its
// type, its [section] and key, its environment variable, its command-line flag and its default.
// Precedence, as Ansible's: the flag, then the environment variable, then the file, then the
// default. `tsbm config` lists this table; docs/config.md describes it.
// Adding a setting: one entry here, then read it with `settings().get('name')` where it applies.

/** How a value is written (in the file and in the environment) and what it becomes. */
export interface OptionTypes {
  /** Text as written. */
  string: string;
  /** One path; relative paths in the file resolve against the file's directory. */
  path: string;
  /** Comma-separated paths (Ansible's `pathlist`, as `inventory = a.yml,b.yml`). */
  pathlist: string[];
  /** Paths separated by `:` (Ansible's `pathspec`, as `roles_path = roles:/srv/roles`). */
  pathspec: string[];
  /** Comma-separated words. */
  list: string[];
  int: number;
  /** true/false, yes/no, on/off, 1/0 (any case). */
  bool: boolean;
}

export type OptionType = keyof OptionTypes;

export interface ConfigOption<T extends OptionType = OptionType> {
  type: T;
  /** The file's [section]; most settings are in [defaults], as in ansible.cfg. */
  section: string;
  /** The key in that section. */
  key: string;
  /** The environment variable that overrides the file. */
  env: string;
  description: string;
  /** The command-line option that overrides both, when there is one. */
  flag?: string;
  /** ansible.cfg's name for the same setting, when Ansible has one (same meaning). */
  ansible?: string;
  default?: OptionTypes[T];
  /** For `int`: the smallest value accepted. */
  min?: number;
}

/** Hosts worked on at once unless -f/--forks or the config say otherwise (as ansible-playbook's 5 is small for a rack). */
export const DEFAULT_FORKS = 50;

const opt = <T extends OptionType>(o: ConfigOption<T>): ConfigOption<T> => o;

/** The settings, by name (the name is the key in its section). */
export const CONFIG_OPTIONS = {
  inventory: opt({
    type: 'pathlist',
    section: 'defaults',
    key: 'inventory',
    env: 'TSBM_INVENTORY',
    flag: '-i, --inventory',
    ansible: 'inventory',
    description: 'Inventories used when no -i is given (files, scripts or directories; comma-separated).',
  }),
  roles_path: opt({
    type: 'pathspec',
    section: 'defaults',
    key: 'roles_path',
    env: 'TSBM_ROLES_PATH',
    flag: '--roles-path',
    ansible: 'roles_path',
    description: 'Where roles are found after roles/ beside the playbook (DIR:DIR; --roles-path adds before these).',
  }),
  forks: opt({
    type: 'int',
    section: 'defaults',
    key: 'forks',
    env: 'TSBM_FORKS',
    flag: '-f, --forks',
    ansible: 'forks',
    default: DEFAULT_FORKS,
    min: 1,
    description: 'Hosts worked on at once.',
  }),
  vault_password_file: opt({
    type: 'path',
    section: 'defaults',
    key: 'vault_password_file',
    env: 'TSBM_VAULT_PASSWORD_FILE',
    flag: '--vault-password-file',
    ansible: 'vault_password_file',
    description: 'File holding the vault password (an executable file is run and its output used).',
  }),
  vault_identity_list: opt({
    type: 'list',
    section: 'defaults',
    key: 'vault_identity_list',
    env: 'TSBM_VAULT_IDENTITY_LIST',
    flag: '--vault-id',
    ansible: 'vault_identity_list',
    description: 'Vault ids as LABEL@SOURCE (SOURCE: a password file, an executable, or "prompt"), comma-separated.',
  }),
  ask_vault_pass: opt({
    type: 'bool',
    section: 'defaults',
    key: 'ask_vault_pass',
    env: 'TSBM_ASK_VAULT_PASS',
    flag: '-J, --ask-vault-pass',
    ansible: 'ask_vault_pass',
    default: false,
    description: 'Ask for the vault password on the terminal.',
  }),
  force_handlers: opt({
    type: 'bool',
    section: 'defaults',
    key: 'force_handlers',
    env: 'TSBM_FORCE_HANDLERS',
    flag: '--force-handlers',
    ansible: 'force_handlers',
    default: false,
    description: "Run notified handlers on hosts that failed too (a play's force_handlers wins).",
  }),
  journal_dir: opt({
    type: 'path',
    section: 'defaults',
    key: 'journal_dir',
    env: 'TSBM_JOURNAL_DIR',
    flag: '--journal-dir',
    default: '.tsbm/runs',
    description: 'Where run journals are written and read (tsbm runs).',
  }),
  lock_dir: opt({
    type: 'path',
    section: 'defaults',
    key: 'lock_dir',
    env: 'TSBM_LOCK_DIR',
    flag: '--lock-dir',
    description: 'Where node locks are kept (default: /var/lib/tsbm/locks for root, else ~/.local/state/tsbm/locks).',
  }),
  state: opt({
    type: 'string',
    section: 'defaults',
    key: 'state',
    env: 'TSBM_STATE',
    flag: '--state',
    description:
      'Where node locks and node records live: files (the lock directory), files:DIR, or etcd://HOST:PORT[,HOST:PORT][/PREFIX][?ttl=S] (etcds:// for TLS), shared by controllers on separate machines (docs/ci.md).',
  }),
  file_url_allowed_paths: opt({
    type: 'pathlist',
    section: 'defaults',
    key: 'file_url_allowed_paths',
    env: 'TSBM_FILE_URL_ALLOWED_PATHS',
    description:
      "Controller directories that inventory data may name files in (file:// image sources, instance_info kernel and ramdisk, driver_info.bootloader, ks_template), besides /var/lib/tsbm and /srv/tsbm (and the playbook's own for templates); comma-separated, as Ironic's file_url_allowed_paths. The variable tsbm_file_url_allowed_paths adds more (docs/security.md).",
  }),
} as const satisfies Record<string, ConfigOption>;

export type SettingName = keyof typeof CONFIG_OPTIONS;
/** The value type of a setting. */
export type SettingValue<N extends SettingName> = OptionTypes[(typeof CONFIG_OPTIONS)[N]['type']];
