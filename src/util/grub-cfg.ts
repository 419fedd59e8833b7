// GRUB's configuration for a boot ISO tsbm writes (the installer boot ISO, the deploy ramdisk):
// one menu entry that finds the ISO by its volume label and boots its kernel and initrd with
// arguments that are each one GRUB word. Plain words go as they are, others single-quoted
// (literal in GRUB, no escapes); what GRUB or the kernel could not carry as one argument
// (whitespace, quotes, backslashes, control characters) has no GRUB word.
const PLAIN = /^[A-Za-z0-9._:/=,@%+~-]+$/;

/** `arg` as one GRUB script word, or undefined when it cannot be one kernel argument. */
export function grubWord(arg: string): string | undefined {
  if (PLAIN.test(arg)) return arg;
  if (/[\s'"\\\x00-\x1f\x7f]/.test(arg)) return undefined;
  return `'${arg}'`;
}

export interface GrubBootEntry {
  /** The first line, a comment saying who wrote the file. */
  comment: string;
  /** The ISO's volume label, which GRUB searches for. */
  label: string;
  title: string;
  kernel: string;
  initrd: string;
  /** Arguments already made GRUB words (grubWord). */
  words: readonly string[];
}

export function grubBootCfg(e: GrubBootEntry): string {
  return [
    `# ${e.comment}`,
    'set timeout=0',
    'set default=0',
    `search --no-floppy --set=root --label ${e.label}`,
    `menuentry '${e.title}' {`,
    `  linux /${e.kernel}${e.words.length ? ` ${e.words.join(' ')}` : ''}`,
    `  initrd /${e.initrd}`,
    '}',
    '',
  ].join('\n');
}
