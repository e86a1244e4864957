import { describe, expect, it } from "vitest";
import { asCliError, CliError } from "./cli-error.ts";

const caught = async (f: () => unknown): Promise<unknown> => {
  try {
    await f();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
};

describe("asCliError", () => {
  it("passes a value through, and turns a throw into a CliError of the same message", async () => {
    expect(asCliError(() => 3)).toBe(3);
    const error = await caught(() =>
      asCliError(() => {
        throw new TypeError('unknown model "gpt-9"');
      }),
    );
    expect(error).toBeInstanceOf(CliError);
    expect((error as Error).message).toBe('unknown model "gpt-9"');
  });

  it("does the same for a promise's value and rejection, and keeps a CliError as it is", async () => {
    expect(await asCliError(async () => "ok")).toBe("ok");
    const rejected = await caught(() => asCliError(() => Promise.reject(new RangeError("no GPU 3"))));
    expect(rejected).toBeInstanceOf(CliError);
    expect((rejected as Error).message).toBe("no GPU 3");
    const own = new CliError("--gpus: bad");
    expect(await caught(() => asCliError(() => Promise.reject(own)))).toBe(own);
    expect(
      await caught(() =>
        asCliError(() => {
          throw own;
        }),
      ),
    ).toBe(own);
  });
});
