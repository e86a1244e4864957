// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** The pure core gets time and randomness through ports (src/core/ports), never from the platform. */
const pureCoreRules = {
  "no-restricted-properties": [
    "error",
    { object: "Date", property: "now", message: "Use the Clock port (src/core/ports/clock.ts)." },
    { object: "Math", property: "random", message: "Use the Rng port (src/core/ports/rng.ts)." },
    { object: "performance", property: "now", message: "Use the Clock port (src/core/ports/clock.ts)." },
  ],
  "no-restricted-syntax": [
    "error",
    { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "new Date() reads the wall clock: use the Clock port." },
  ],
  "no-restricted-imports": [
    "error",
    { patterns: [{ group: ["node:*", "cloudflare:*"], message: "src/core imports no platform API: pass it in as a port." }] },
  ],
};

export default tseslint.config(
  { ignores: ["node_modules/**", "out/**", ".wrangler/**", "worker-configuration.d.ts", "**/*.js.map"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  { files: ["src/core/**/*.ts"], ignores: ["src/core/**/*.test.ts"], rules: pureCoreRules },
  {
    files: ["**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
);
