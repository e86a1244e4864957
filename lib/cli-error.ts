/** An error meant for the user of the CLI: printed without a stack trace, exit code 1. */
export class CliError extends Error {
  override name = "CliError";
}
