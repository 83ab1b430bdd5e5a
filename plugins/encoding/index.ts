/**
 * Text files in another character set than UTF-8: decoded as they stream, by the `encoding` set
 * (encoded.ts), or by a UTF-16 byte order mark when none is (bom.ts); decode.ts says which
 * decoder and why.
 */
export { utf16MarkedIngester } from './bom.ts';
export { encodingProblem, isUtf8 } from './decode.ts';
export { encodedIngester } from './encoded.ts';
