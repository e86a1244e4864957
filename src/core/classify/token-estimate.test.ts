import { describe, expect, it } from "vitest";
import { seededRng } from "../ports/rng.ts";
import { estimateInputTokens, estimateTextTokens, IMAGE_TOKENS, utf8Length, wordCount } from "./token-estimate.ts";

describe("utf8Length and wordCount", () => {
  it("counts UTF-8 bytes for 1- to 4-byte characters", () => {
    expect(utf8Length("abc")).toBe(3);
    expect(utf8Length("é")).toBe(2);
    expect(utf8Length("你好")).toBe(6);
    expect(utf8Length("😀")).toBe(4);
    expect(utf8Length("\ud800")).toBe(3); // a lone surrogate is encoded as U+FFFD
  });

  it("counts whitespace-separated words", () => {
    expect(wordCount("  the  quick\nbrown\tfox ")).toBe(4);
    expect(wordCount("")).toBe(0);
  });
});

describe("estimateTextTokens", () => {
  // Reference counts from OpenAI's cl100k_base tokenizer.
  it.each([
    ["Hello, world!", 4, 4],
    ["The quick brown fox jumps over the lazy dog.", 10, 11],
    ["1 2 3 4 5 6 7 8 9 10", 10, 10],
  ])("estimates %j (cl100k: %i tokens) as %i", (text, reference, expected) => {
    const estimate = estimateTextTokens(text);
    expect(estimate).toBe(expected);
    expect(Math.abs(estimate - reference) / reference).toBeLessThanOrEqual(0.1);
  });

  it("uses the word count where bytes / 4 undercounts, and bytes / 4 for long words and other scripts", () => {
    expect(estimateTextTokens("a b c d e f g h")).toBe(8);
    expect(estimateTextTokens("internationalisation")).toBe(5);
    expect(estimateTextTokens("你好世界你好世界")).toBe(6);
    expect(estimateTextTokens("")).toBe(0);
  });
});

describe("estimateInputTokens", () => {
  it("adds chat framing per message, images and exact token ids", () => {
    expect(estimateInputTokens({ texts: ["Hello, world!"], messages: 0, images: 0, tokenIds: 0 })).toBe(4);
    expect(estimateInputTokens({ texts: ["You are terse.", "Hello, world!"], messages: 2, images: 1, tokenIds: 0 })).toBe(4 + 4 + 2 * 3 + 3 + IMAGE_TOKENS);
    expect(estimateInputTokens({ texts: [], messages: 0, images: 0, tokenIds: 1234 })).toBe(1234);
  });
});

describe("estimateTextTokens (single pass)", () => {
  it("agrees with the two separate counts on mixed text", () => {
    for (const text of ["Hello, world!", "naïve café\u00a0déjà vu", "数据 中心\u3000能耗", "emoji 😀😀 and 𝄞 clef", "  lots   of\tspace\n\n", "x".repeat(4097)]) {
      expect(estimateTextTokens(text)).toBe(Math.max(Math.ceil(utf8Length(text) / 4), wordCount(text)));
    }
  });

  it("agrees with them on random text of ASCII, spaces, 2- and 3-byte characters and (lone) surrogates", () => {
    const rng = seededRng(7);
    const pick = (xs: readonly number[]) => xs[Math.floor(rng.next() * xs.length)]!;
    const kinds = [
      () => 0x21 + Math.floor(rng.next() * 94),
      () => pick([9, 10, 11, 12, 13, 32, 0xa0, 0x3000, 0x85, 0x2028]),
      () => 0x80 + Math.floor(rng.next() * 0x780),
      () => 0x800 + Math.floor(rng.next() * 0xd000),
      () => 0xd800 + Math.floor(rng.next() * 0x800),
    ];
    for (let n = 0; n < 5_000; n++) {
      // Mostly short words and spaces, where the word count can decide the estimate.
      const codes = Array.from({ length: Math.floor(rng.next() * 24) }, () => kinds[pick([0, 0, 0, 1, 1, 1, 2, 3, 4])]!());
      const text = String.fromCharCode(...codes);
      expect(estimateTextTokens(text), JSON.stringify(text)).toBe(Math.max(Math.ceil(utf8Length(text) / 4), wordCount(text)));
    }
  });
});
