// What tsbm does with an inspected image: write it as raw, convert it from qcow2, or refuse it
// with a sentence naming the image and what was found. The content decides; a declared format
// (image_disk_format) must agree with it, and without one the content is the format (a qcow2
// named *.img is converted, not written to the disk as qcow2 bytes).
import { fmtLimit } from '../../util/limits.js';
import { describeInspection } from './detect.js';
import type { Inspection, WritableFormat } from './types.js';

export interface VerdictInput {
  /** How messages name the image (its URL or path, credentials masked). */
  name: string;
  /** image_disk_format, when the operator gave one. */
  declared?: WritableFormat | undefined;
  /** The largest virtual size accepted (tsbm_max_image_virtual), in bytes. */
  maxVirtualBytes: number;
}

export type Verdict =
  | { ok: true; format: WritableFormat; inspection: Inspection; found: string }
  | { ok: false; message: string; hint: string; inspection: Inspection };

const FLATTEN = 'tsbm never lets qemu-img open a file an image names: publish a self-contained image (qemu-img convert -O qcow2 SOURCE NEW writes one without backing or data files)';

export function judgeImage(i: Inspection, v: VerdictInput): Verdict {
  const found = describeInspection(i, fmtLimit);
  const refuse = (message: string, hint: string): Verdict => ({ ok: false, message, hint, inspection: i });
  const unsafe = i.unsafe.length ? `; ${i.unsafe.join('; ')}` : '';
  const writable = i.format === 'raw' || i.format === 'qcow2';
  if (v.declared && v.declared !== i.format) {
    return refuse(
      `${v.name} is refused: image_disk_format says ${v.declared}, but the image is ${found}${unsafe}`,
      writable
        ? "set image_disk_format to the image's real format, or publish the image in the format declared"
        : `tsbm writes raw and qcow2 images: convert it (qemu-img convert -f ${i.format} -O qcow2 SOURCE NEW) or fix image_disk_format`,
    );
  }
  if (!writable) {
    return refuse(
      `${v.name} is refused: the image is ${found}, and tsbm writes raw and qcow2 images only${unsafe}`,
      i.format === 'iso'
        ? 'an ISO image is not written to a disk (as in Ironic): use a whole-disk image in raw or qcow2'
        : `convert it to qcow2 or raw (qemu-img convert -f ${i.format} -O qcow2 SOURCE NEW) and publish that`,
    );
  }
  if (i.unsafe.length) return refuse(`${v.name} is refused: the image is ${found}${unsafe}`, FLATTEN);
  if (i.virtualSize !== undefined && i.virtualSize > v.maxVirtualBytes) {
    return refuse(
      `${v.name} is refused: its virtual size ${fmtLimit(i.virtualSize)} is over tsbm_max_image_virtual (${fmtLimit(v.maxVirtualBytes)})`,
      'an image this large was most likely made to fill disks; if it is genuine, raise tsbm_max_image_virtual for these nodes',
    );
  }
  return { ok: true, format: i.format === 'qcow2' ? 'qcow2' : 'raw', inspection: i, found };
}
