// An image the inspector (or qemu-img's second look) refused: the message names the image and
// what was found, the hint what to do. Nothing was written or converted when it is thrown.
export class ImageRefused extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'ImageRefused';
  }
}
