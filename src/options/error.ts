/** The one error a bad setting throws, whichever setting and wherever it is checked for the API. */
export class WatchConfigError extends Error {
  readonly code = 'WATCH_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'WatchConfigError';
  }
}
