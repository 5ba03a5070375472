/**
 * The JavaScript that runs a tool stub, as source text shared by the worker sandbox
 * and the in-process executor (so both format outputs identically; plain JS on
 * purpose: a bundled function's `toString()` would carry the bundler's helpers).
 *
 * Output formatting follows FTRL's evaluation: a string as is; an object or
 * array as JSON the way Python's `json.dumps(x, ensure_ascii=False)` writes it (", "
 * and ": " separators, NaN/Infinity spelled as Python does); null/undefined as
 * "None", booleans as "True"/"False", anything else as `String(x)`. Outputs longer than
 * MAX_OUTPUT_CHARS are cut with a marker.
 *
 * How a stub is compiled, the threat model and what enforces it: docs/security.md.
 */

/** Longest observation a stub may produce (characters). */
export const MAX_OUTPUT_CHARS = 4000;

/** Globals shadowed (as undefined parameters) inside every stub. */
export const SHADOWED_GLOBALS = [
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'EventSource',
  'importScripts',
  'Worker',
  'SharedWorker',
  'BroadcastChannel',
  'indexedDB',
  'caches',
  'navigator',
  'localStorage',
  'sessionStorage',
  'document',
  'window',
  'self',
  'postMessage',
  'close',
  'onmessage',
  'process',
  'require',
  'module',
  'Deno',
  'Bun',
  'WebTransport',
  'RTCPeerConnection',
  'Request',
  'Response',
  'Headers',
] as const;

/** Globals removed from a browser tool worker (and from the Pyodide worker once loaded). */
export const BLOCKED_WORKER_GLOBALS = [
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'WebSocketStream',
  'EventSource',
  'WebTransport',
  'importScripts',
  'indexedDB',
  'caches',
  'cookieStore',
  'BroadcastChannel',
  'Worker',
  'SharedWorker',
  'navigator',
  'Request',
  'Response',
  'Headers',
  'postMessage',
  'onmessage',
  'onmessageerror',
  'requestFileSystem',
  'webkitRequestFileSystem',
  'webkitRequestFileSystemSync',
  'webkitResolveLocalFileSystemURL',
  'webkitResolveLocalFileSystemSyncURL',
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
 * Removes from a browser worker's global object, and from every prototype on its chain (so a
 * descriptor cannot be read back from `WorkerGlobalScope.prototype`), the globals that reach
 * the network, storage, other workers or other contexts. Used by the tool worker (below) and
 * by the Pyodide worker once Pyodide is loaded. `isCodeGenerationBlocked` also turns `eval` and
 * the Function constructors off (no new code, hence no dynamic `import()` of a URL).
 */
export const BROWSER_LOCKDOWN_SOURCE = String.raw`
var BLOCKED_WORKER_GLOBALS = ${JSON.stringify(BLOCKED_WORKER_GLOBALS)};
function lockDownWorkerGlobals(isCodeGenerationBlocked) {
  var getProto = Object.getPrototypeOf;
  var describe = Object.getOwnPropertyDescriptor;
  var define = Object.defineProperty;
  for (var i = 0; i < BLOCKED_WORKER_GLOBALS.length; i++) {
    var name = BLOCKED_WORKER_GLOBALS[i];
    for (var owner = globalThis; owner; owner = getProto(owner)) {
      if (!describe(owner, name)) continue;
      try { delete owner[name]; } catch (_) {}
      if (describe(owner, name)) {
        try { define(owner, name, { value: undefined, writable: false, configurable: false }); } catch (_) {}
      }
    }
    try { define(globalThis, name, { value: undefined, writable: false, configurable: false }); } catch (_) {}
  }
  if (!isCodeGenerationBlocked) return;
  var denied = function () { throw new EvalError('code generation is off in the tool sandbox'); };
  var constructors = [Function, (async function () {}).constructor, (function* () {}).constructor, (async function* () {}).constructor];
  for (var c = 0; c < constructors.length; c++) {
    try { define(constructors[c].prototype, 'constructor', { value: denied, writable: false, configurable: false }); } catch (_) {}
  }
  denied.prototype = Function.prototype;
  try { define(globalThis, 'Function', { value: denied, writable: false, configurable: false }); } catch (_) {}
  try { define(globalThis, 'eval', { value: denied, writable: false, configurable: false }); } catch (_) {}
}
`;

/**
 * The browser tool worker's whole script (a classic worker, started from a Blob URL inside the
 * tool sandbox frame, public/tool-sandbox.html, whose CSP forbids every connection and whose
 * origin is opaque). It captures its first message's port, locks its globals down, and answers
 * one `{id, source, argsJson, timeoutMs}` with `{id, ok, output}` on that port: the executor
 * uses a fresh worker per call, so nothing a call leaves in this realm reaches another.
 */
export const WORKER_SOURCE = String.raw`
"use strict";
${STUB_RUNTIME_SOURCE}
${BROWSER_LOCKDOWN_SOURCE}
(function () {
  var scope = self;
  var listen = scope.addEventListener.bind(scope);
  var unlisten = scope.removeEventListener.bind(scope);
  var parseJson = JSON.parse;
  lockDownWorkerGlobals(false);
  function serve(port) {
    var send = port.postMessage.bind(port);
    port.onmessage = function (event) {
      var message = event.data;
      var id = message && message.id;
      var args;
      try { args = parseJson(message.argsJson); }
      catch (e) { send({ id: id, ok: false, output: 'the arguments are not JSON: ' + describeError(e) }); return; }
      runStub(message.source, args).then(function (result) {
        try { send({ id: id, ok: result.ok, output: StringOf(result.output) }); }
        catch (e) { send({ id: id, ok: false, output: 'could not send the output: ' + describeError(e) }); }
      });
    };
  }
  listen('message', function first(event) {
    var port = event.ports && event.ports[0];
    if (!port) return;
    unlisten('message', first);
    serve(port);
  });
})();
`;
