// podman reads the *.conf files of containers.conf.d and registries.conf.d in byte order of
// their names, and a later file's setting (a whole [[registry]] table for one registry) replaces
// an earlier one's. Site-built ramdisks often carry their own drop-ins (50-..., 99-...), so tsbm
// names its own to sort after them, and reads the directory back in the same batch: a file that
// still sorts after tsbm's and names what tsbm set is reported by name, with what it overrides.

/** tsbm's drop-in names: `zz-` sorts after digits, capitals and most lower-case names. */
export const RAMDISK_CONF_FILE = 'zz-tsbm-ramdisk.conf';
export const REGISTRIES_CONF_FILE = 'zz-tsbm-registries.conf';

/**
 * A batch step that prints each *.conf file of `dir` with the words of `words` its
 * non-comment lines contain (`name<TAB> word word`). Shell builtins only: it needs no program
 * the ramdisk contract does not already ask for; a missing directory prints nothing.
 */
export function scanDropInsStep(dir: string, words: readonly string[]): string[] {
  const script = `d=$1; shift
for f in "$d"/*.conf; do
  [ -f "$f" ] || continue; hit=
  while IFS= read -r l || [ -n "$l" ]; do
    t=\${l#"\${l%%[![:space:]]*}"}; case $t in \\#*) continue;; esac
    for w; do case $l in *"$w"*) case " $hit " in *" $w "*) ;; *) hit="$hit $w";; esac;; esac; done
  done < "$f"
  printf '%s\\t%s\\n' "\${f##*/}" "$hit"
done; exit 0`;
  return ['sh', '-c', script, 'sh', dir, ...words];
}

/** A ramdisk drop-in podman reads after tsbm's that names some of what tsbm set. */
export interface DropInOverride {
  file: string;
  words: string[];
}

/** Byte order, as podman's directory read sorts names (Go's sort of strings). */
const after = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)) > 0;

/** The files of a scanDropInsStep listing that sort after `ours` and name one of its words. */
export function overridesOf(listing: string, ours: string): DropInOverride[] {
  const out: DropInOverride[] = [];
  for (const line of listing.split('\n')) {
    const [file = '', hits = ''] = line.split('\t');
    const words = hits.split(' ').filter(Boolean);
    if (file && file !== ours && after(file, ours) && words.length) out.push({ file, words });
  }
  return out;
}

/** One line per override: which file, what it replaces, what to do. */
export function overrideMessage(dir: string, ours: string, o: DropInOverride): string {
  const what = ours === REGISTRIES_CONF_FILE ? `its [[registry]] entry for ${o.words.join(', ')} replaces tsbm's (the run's image mirror, insecure flags)` : `its ${o.words.join(', ')} replaces tsbm's`;
  return `${dir}/${o.file} on the ramdisk sorts after tsbm's ${ours}: ${what}; rename it to sort before ${ours} or drop that entry from the ramdisk`;
}
