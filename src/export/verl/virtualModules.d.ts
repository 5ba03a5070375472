/** vite.config.ts's `pact-verl-tool-server` plugin: DIR/pact_verl/tool_server.mjs, bundled at build time. */
declare module 'virtual:pact-verl-tool-server' {
  const text: string;
  export default text;
}
