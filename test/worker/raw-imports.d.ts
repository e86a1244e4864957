/** Vite's `?raw` imports: the file's text. */
declare module "*?raw" {
  const text: string;
  export default text;
}
