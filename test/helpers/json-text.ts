/** JSON lines text and Hyper's spelling of SQL types, for the JSON dialect suites. */

export const lines = (records: readonly object[]) => `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
/** `timestamp without time zone`, `character varying`, `double precision` as Hyper spells them. */
export const plain = (sqlType: string) =>
  sqlType
    .replace(/ without time zone$/, '')
    .replace(/^character varying$/, 'text')
    .replace(/^double precision$/, 'double precision');
export const textType = /^(text|character varying)/;
