/** How the streamed reader (splice.ts) changes one field of a record on its way to COPY, and why a value cannot load. */

/** Why a field's value cannot load. */
export interface FieldProblem {
  readonly code: string;
  readonly reason: string;
  readonly fileLevel: boolean;
}

/** How one field of the file becomes what loads. */
export interface FieldRule {
  /** The field's bytes load as they are (checked before anything is decoded), e.g. an ISO date. */
  readonly keep?: (bytes: Uint8Array, start: number, end: number) => boolean;
  /**
   * The unquoted field's replacement, made from its bytes without decoding them (a number's
   * separators), written into `scratch` (`REWRITE_BYTES` long): its length, `undefined` when it
   * needs none, `false` when `convert` must judge the text.
   */
  readonly rewrite?: (bytes: Uint8Array, start: number, end: number, scratch: Uint8Array) => number | undefined | false;
  /** The text to load (undefined: NULL), or why the value cannot load. `quoted`: the field had quotes. */
  readonly convert: (text: string, quoted: boolean) => string | undefined | FieldProblem;
}

export function isFieldProblem(value: string | undefined | FieldProblem): value is FieldProblem {
  return typeof value === 'object';
}

/** Room for a field `FieldRule.rewrite` writes; a longer field goes to `convert`. */
export const REWRITE_BYTES = 256;
