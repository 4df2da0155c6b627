/**
 * The length in bytes of `text` encoded as UTF-8, without encoding it: admission measures
 * every input against the size limit, and encoding allocates a buffer per input (a
 * noticeable share of a large batch submit). A surrogate pair is 4 bytes; anything else of
 * the Basic Multilingual Plane is 1 to 3; a lone surrogate counts 3, as TextEncoder
 * replaces it with U+FFFD.
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
      continue;
    }
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        // Two UTF-16 units, already counted 2, make 4 bytes.
        bytes += 2;
        index++;
        continue;
      }
    }
    bytes += 2;
  }
  return bytes;
}
