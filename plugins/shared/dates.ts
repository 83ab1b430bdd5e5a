/** Calendar dates from day counts, shared by the ingesters that write dates as text for COPY. */

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** Days since 1970-01-01 → `YYYY-MM-DD` and whether it is BC (proleptic Gregorian, any year). */
export function civil(days: number): { text: string; bc: boolean } {
  // Howard Hinnant's days_from_civil inverse: exact for every integer day count.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  // SQL has no year 0: astronomical year 0 is 1 BC.
  const bc = year <= 0;
  return { text: `${pad(bc ? 1 - year : year, 4)}-${pad(month, 2)}-${pad(day, 2)}`, bc };
}

export function formatDate(days: number): string {
  const { text, bc } = civil(days);
  return bc ? `${text} BC` : text;
}
