// Rock Ridge (RRIP 1.09 over SUSP 1.09) System Use entries. They carry the exact POSIX
// names (NM) and modes (PX) so `meta_data.json` and `2012-08-10` read back unchanged on
// Linux mounts and `isoinfo -R`, whatever the 8.3-ish ISO names say.

const RR_PX = 0x01;
const RR_NM = 0x08;

export const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;

function entry(sig: string, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.write(sig, 0, 'latin1');
  head[2] = 4 + body.length;
  head[3] = 1; // entry version
  return Buffer.concat([head, body]);
}

function bothBody(values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => {
    b.writeUInt32LE(v, i * 8);
    b.writeUInt32BE(v, i * 8 + 4);
  });
  return b;
}

/** SUSP indicator: must be the first entry of the root's "." record. */
export function spEntry(): Buffer {
  return entry('SP', Buffer.from([0xbe, 0xef, 0]));
}

/** RRIP 1.09 "RR" flags entry; readers (Linux) stop at it when a present field is not flagged. */
export function rrEntry(hasName: boolean): Buffer {
  return entry('RR', Buffer.from([RR_PX | (hasName ? RR_NM : 0)]));
}

export function pxEntry(mode: number, nlink: number): Buffer {
  return entry('PX', bothBody([mode, nlink, 0, 0]));
}

export function nmEntry(name: string): Buffer {
  return entry('NM', Buffer.concat([Buffer.from([0]), Buffer.from(name, 'utf8')]));
}

/** Continuation area pointer: the rest of the System Use data is at (sector, offset, length). */
export function ceEntry(sector: number, offset: number, length: number): Buffer {
  return entry('CE', bothBody([sector, offset, length]));
}

/** Extension reference: declares Rock Ridge, which makes Linux prefer it over Joliet. */
export function erEntry(): Buffer {
  const id = Buffer.from('RRIP_1991A', 'latin1');
  const des = Buffer.from(
    'THE ROCK RIDGE INTERCHANGE PROTOCOL PROVIDES SUPPORT FOR POSIX FILE SYSTEM SEMANTICS',
    'latin1',
  );
  const src = Buffer.from(
    'PLEASE CONTACT DISC PUBLISHER FOR SPECIFICATION SOURCE.  SEE PUBLISHER IDENTIFIER IN PRIMARY VOLUME DESCRIPTOR FOR CONTACT INFORMATION.',
    'latin1',
  );
  return entry('ER', Buffer.concat([Buffer.from([id.length, des.length, src.length, 1]), id, des, src]));
}
