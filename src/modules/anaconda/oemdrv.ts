// The kickstart volume: an ISO 9660 image labelled OEMDRV holding ks.cfg at its root, which
// Anaconda finds and reads by itself (no kernel argument) when it is attached as a second
// virtual media device. Built with tsbm's own ISO writer (Rock Ridge and Joliet names).
import { buildIso } from '../../configdrive/iso9660.js';

export const OEMDRV_LABEL = 'OEMDRV';
const KICKSTART_NAME = 'ks.cfg';
/** Fixed, so the same kickstart gives the same bytes. */
const ISO_DATE = new Date('2000-01-01T00:00:00Z');

export function buildOemdrvIso(kickstart: string): Buffer {
  return buildIso([{ path: KICKSTART_NAME, data: Buffer.from(kickstart, 'utf8') }], { volumeId: OEMDRV_LABEL, date: ISO_DATE, publisher: 'tsbm' });
}
