import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["generated/**", "dist/**", "node_modules/**", ".data/**", "coverage/**", "openapi.yaml"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-floating-promises": "off",
      "no-console": "off",
    },
  },
  {
    // Migrations are frozen in time and typed Kysely<any> on purpose (no imports from app code).
    files: ["src/db/migrations/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
