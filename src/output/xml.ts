// XML text and attribute escaping for the JUnit writer. Characters XML 1.0 forbids (most C0
// controls, lone surrogates, U+FFFE/U+FFFF) cannot be escaped at all, so they become U+FFFD.

const INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function xmlEscape(text: string): string {
  return text
    .replace(INVALID, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    // keep line breaks and tabs inside attributes (a parser would normalise them to spaces)
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}

/** Element text: like attributes, but newlines stay readable. */
export function xmlText(text: string): string {
  return xmlEscape(text).replace(/&#10;/g, '\n').replace(/&#9;/g, '\t');
}
