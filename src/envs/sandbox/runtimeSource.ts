/**
 * The JavaScript that runs a tool stub, as source text shared by the worker sandbox
 * and the in-process executor (so both format outputs identically; plain JS on
 * purpose: a bundled function's `toString()` would carry the bundler's helpers).
 *
 * Output formatting follows FTRL's evaluation (issue 4): a string as is; an object or
 * array as JSON the way Python's `json.dumps(x, ensure_ascii=False)` writes it (", "
 * and ": " separators, NaN/Infinity spelled as Python does); null/undefined as
 * "None", booleans as "True"/"False", anything else as `String(x)`. Outputs longer than
 * MAX_OUTPUT_CHARS are cut with a marker.
 *
 * Compilation: by default a stub is compiled with `Function` whose parameters shadow
 * the globals a stub should not reach (network, workers, storage, `process`,
 * `require`); the Node worker replaces this with a fresh `vm` context. See
 * `sandbox/index.ts` for what is and is not isolated.
 */

/** Longest observation a stub may produce (characters). */
export const MAX_OUTPUT_CHARS = 4000;

/** Globals shadowed (as undefined parameters) inside every stub. */
export const SHADOWED_GLOBALS = [
  'fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'importScripts', 'Worker', 'SharedWorker',
  'BroadcastChannel', 'indexedDB', 'caches', 'navigator', 'localStorage', 'sessionStorage', 'document',
  'window', 'self', 'postMessage', 'close', 'onmessage', 'process', 'require', 'module', 'Deno', 'Bun',
  'WebTransport', 'RTCPeerConnection', 'Request', 'Response', 'Headers',
] as const;

export const STUB_RUNTIME_SOURCE = String.raw`
var MAX_OUTPUT_CHARS = ${MAX_OUTPUT_CHARS};
var SHADOWED_GLOBALS = ${JSON.stringify(SHADOWED_GLOBALS)};
var MAX_DEPTH = 64;
// Captured once, so a stub that overwrites a builtin cannot break the formatting of later calls.
var jsonStringify = JSON.stringify;
var objectKeys = Object.keys;
var isArray = Array.isArray;
var StringOf = String;

function pyJsonNumber(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return jsonStringify(x);
}

function pyJson(value, depth, seen) {
  if (depth > MAX_DEPTH) throw new Error('output nested deeper than ' + MAX_DEPTH + ' levels');
  if (value !== null && typeof value === 'object' && typeof value.toJSON === 'function') value = value.toJSON();
  if (value === null || value === undefined) return 'null';
  var t = typeof value;
  if (t === 'string') return jsonStringify(value);
  if (t === 'number') return pyJsonNumber(value);
  if (t === 'boolean') return value ? 'true' : 'false';
  if (t === 'bigint') return value.toString();
  if (t !== 'object') return 'null';
  if (seen.indexOf(value) >= 0) throw new Error('output contains a circular reference');
  seen.push(value);
  var parts = [];
  if (isArray(value)) {
    for (var i = 0; i < value.length; i++) {
      var item = value[i];
      parts.push(item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : pyJson(item, depth + 1, seen));
    }
    seen.pop();
    return '[' + parts.join(', ') + ']';
  }
  var keys = objectKeys(value);
  for (var k = 0; k < keys.length; k++) {
    var v = value[keys[k]];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    parts.push(jsonStringify(keys[k]) + ': ' + pyJson(v, depth + 1, seen));
  }
  seen.pop();
  return '{' + parts.join(', ') + '}';
}

function formatToolOutput(value) {
  var text;
  if (typeof value === 'string') text = value;
  else if (value === null || value === undefined) text = 'None';
  else if (typeof value === 'boolean') text = value ? 'True' : 'False';
  else if (typeof value === 'number') text = pyJsonNumber(value);
  else if (typeof value === 'object') text = pyJson(value, 0, []);
  else text = StringOf(value);
  if (text.length > MAX_OUTPUT_CHARS) text = text.slice(0, MAX_OUTPUT_CHARS) + ' …[output cut at ' + MAX_OUTPUT_CHARS + ' characters]';
  return text;
}

function describeError(e) {
  try {
    // Duck-typed: a stub compiled in another realm (Node's vm context) throws its own Error.
    if (e !== null && typeof e === 'object' && typeof e.message === 'string') return e.message || StringOf(e.name || 'error');
    if (typeof e === 'string') return e;
    return StringOf(e);
  } catch (_) {
    return 'unknown error';
  }
}

var compiledStubs = new Map();

/** Source text → function. Default: a Function whose parameters shadow SHADOWED_GLOBALS. */
var evaluateStubSource = function (source) {
  return Function.apply(null, SHADOWED_GLOBALS.concat(['"use strict";\nreturn (' + source + '\n);']))();
};

function compileStub(source) {
  var fn = compiledStubs.get(source);
  if (fn) return fn;
  if (typeof source !== 'string') throw new Error('tool source must be a string');
  fn = evaluateStubSource(source);
  if (typeof fn !== 'function') throw new Error('tool source does not evaluate to a function');
  if (compiledStubs.size > 512) compiledStubs.clear();
  compiledStubs.set(source, fn);
  return fn;
}

/** Runs a stub; resolves to {ok, output} and never rejects. */
function runStub(source, args) {
  return new Promise(function (resolve) { resolve(compileStub(source)(args)); })
    .then(function (value) { return { ok: true, output: formatToolOutput(value) }; })
    .catch(function (e) { return { ok: false, output: describeError(e) }; });
}
`;

/**
 * The worker's whole script: the runtime, a best-effort removal of network and
 * storage globals, and a message loop `{id, source, args}` → `{id, ok, output}`.
 * Runs as a Node `worker_threads` eval worker or as a classic browser worker.
 */
export const WORKER_SOURCE = String.raw`
"use strict";
var nodePort = null;
if (typeof require === 'function') {
  try { nodePort = require('node:worker_threads').parentPort; } catch (_) { nodePort = null; }
}
var sendMessage = nodePort ? nodePort.postMessage.bind(nodePort) : self.postMessage.bind(self);
var onPortMessage = nodePort ? nodePort.on.bind(nodePort) : null;
var nodeVm = null;
if (nodePort) {
  try { nodeVm = require('node:vm'); } catch (_) { nodeVm = null; }
}
${STUB_RUNTIME_SOURCE}
if (nodeVm) {
  // In Node, stubs run in a fresh vm context: its global has only the JavaScript builtins
  // (no process, require, fetch, timers), and a dynamic import() there is refused.
  var stubContext = nodeVm.createContext({});
  evaluateStubSource = function (source) {
    return new nodeVm.Script('"use strict";\n(' + source + '\n)', { filename: 'tool-stub.js' }).runInContext(stubContext);
  };
}
(function removeGlobals() {
  var names = ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource', 'importScripts', 'Worker', 'SharedWorker',
    'BroadcastChannel', 'indexedDB', 'caches', 'WebTransport', 'RTCPeerConnection', 'Request', 'Response', 'Headers',
    'require', 'module', 'exports', '__filename', '__dirname', 'process'];
  for (var i = 0; i < names.length; i++) {
    try { Object.defineProperty(globalThis, names[i], { value: undefined, writable: false, configurable: false }); } catch (_) {}
  }
})();
function handleMessage(message) {
  var id = message && message.id;
  runStub(message && message.source, message && message.args).then(function (result) {
    try { sendMessage({ id: id, ok: result.ok, output: String(result.output) }); }
    catch (e) { sendMessage({ id: id, ok: false, output: 'could not send the output: ' + describeError(e) }); }
  });
}
if (onPortMessage) onPortMessage('message', handleMessage);
else self.onmessage = function (event) { handleMessage(event.data); };
`;
