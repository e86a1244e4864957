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
};

const PLATFORM = { group: ["node:*", "cloudflare:*"], message: "src/core imports no platform API: pass it in as a port." };

/**
 * The core imports nothing outside src/core: for a file `depth` folders below it, a relative import
 * that climbs more than `depth` levels leaves it. One config per depth, since the rule matches the
 * import's text, not the file it resolves to.
 */
const pureCoreImports = [0, 1, 2, 3, 4].map((depth) => ({
  files: [`src/core/${"*/".repeat(depth)}*.ts`],
  ignores: ["src/core/**/*.test.ts", "src/core/**/*.test-helper.ts"],
  rules: {
    "no-restricted-imports": ["error", { patterns: [PLATFORM, { regex: `^(\\.\\./){${depth + 1},}`, message: "src/core imports nothing outside src/core: what it needs comes in as a port or a schema." }] }],
  },
}));

/** Import paths a layer may not take, as regular expressions over the import's text (see docs/architecture.md, "Layers"). */
const forbidden = (regex, message) => ({ "no-restricted-imports": ["error", { patterns: [{ regex, message }] }] });
/** The same for `import("...")` with a literal path, which no-restricted-imports does not see. */
const forbiddenDynamic = (regex, message) => ({ "no-restricted-syntax": ["error", { selector: `ImportExpression[source.value=/${regex.replaceAll("/", "\\/")}/]`, message }] });

const layerRules = [
  ...pureCoreImports,
  {
    files: ["host-agent/**/*.ts", "durable-objects/**/*.ts", "src/edge/**/*.ts"],
    rules: forbidden("(^|/)(src/)?worker(/|$)", "The site and the Durable Objects read the edge Worker's contracts from src/core/schemas and its shared helpers from src/edge; the Worker supplies its behaviour through ports (e.g. BatchServing)."),
  },
  {
    files: ["cli/**/*.ts"],
    ignores: ["cli/**/*.test.ts", "cli/**/*.test-helper.ts"],
    rules: {
      ...forbidden("^(\\.\\./)+bench(/|$)", "cli/ does not import bench/: shared pieces live in lib/, and bench/'s commands load through cli/bench-commands.ts."),
      ...forbiddenDynamic("^(\\.\\./)+bench/", "cli/ loads bench/'s commands only through cli/bench-commands.ts."),
    },
  },
  {
    files: ["bench/**/*.ts"],
    ignores: ["bench/**/*.test.ts", "bench/**/*.test-helper.ts"],
    rules: {
      ...forbidden("^(\\.\\./)+cli(/|$)", "bench/ does not import cli/: what both need lives in lib/."),
      ...forbiddenDynamic("^(\\.\\./)+cli/", "bench/ does not import cli/: what both need lives in lib/."),
    },
  },
  {
    files: ["lib/**/*.ts"],
    ignores: ["lib/**/*.test.ts"],
    rules: forbidden("^(\\.\\./)+(cli|bench)(/|$)", "lib/ sits below cli/ and bench/ and imports neither."),
  },
];

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
  ...layerRules,
  {
    files: ["**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
);
