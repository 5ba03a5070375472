/**
 * Reconstructs gold tool calls for FTRL tasks, which ship none: FTRL's test file holds
 * only the user turn in `messages` (no assistant `tool_calls`), so the calls that
 * answer each sub-question must be derived from the tool code itself.
 *
 * Simplification: this is a search guided by the expected answer, not recorded gold
 * calls; it finds arguments that make the tool return the answer, which may differ from
 * what the data's author intended. Answers it cannot reach are reported as missing.
 *
 * The candidate search step by step: docs/envs.md.
 */
import type { ToolCall } from '../types';

/** A reconstructed call, with the arguments' JSON text exactly as Python wrote it. */
export interface FtrlGoldCall extends ToolCall {
  argumentsJson: string;
  /** The expected answer this call was found for. */
  expected: string;
  how: 'example' | 'search';
  /** Candidate calls tried before this one was found. */
  tried: number;
}

/** Python source of the search; entry point `reconstruct_gold_calls(task_json) -> str`. */
export const GOLD_CALL_SEARCH_SOURCE = String.raw`
import ast, itertools, json, re

MAX_CALLS_PER_ANSWER = 1000

def normalize_for_verify(text):
    return str(text).lower().replace(',', '').strip()

def verify_answer(output, gold):
    out = normalize_for_verify(output)
    return all(normalize_for_verify(piece) in out for piece in str(gold).split(', '))

def find_function(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None

def read_literal(node):
    try:
        return True, ast.literal_eval(node)
    except Exception:
        return False, None

def list_params(fn):
    a = fn.args
    positional = a.posonlyargs + a.args
    n_required = len(positional) - len(a.defaults)
    required = [p.arg for p in positional[:n_required]]
    optional = [p.arg for p in positional[n_required:]]
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        (required if d is None else optional).append(p.arg)
    return required, optional

def collect_literal_bindings(fn):
    """Name -> literal value for 'NAME = <literal>' assignments in the function body."""
    bindings = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            ok, value = read_literal(node.value)
            if ok:
                bindings[node.targets[0].id] = value
    return bindings

def collect_dict_values_by_key(fn):
    """'key' -> every literal value stored under 'key' in any dict literal of the function."""
    by_key = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    ok, value = read_literal(v)
                    if ok and isinstance(value, (str, int, float, bool)):
                        by_key.setdefault(k.value, []).append(value)
    return by_key

STRING_METHODS = {'lower', 'upper', 'strip', 'title', 'casefold', 'capitalize'}

def strip_string_methods(node):
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
           and node.func.attr in STRING_METHODS and not node.args):
        node = node.func.value
    return node

def param_of(node, params):
    node = strip_string_methods(node)
    if isinstance(node, ast.Name) and node.id in params:
        return node.id
    return None

def values_of(node, bindings, by_key):
    """Candidate values a parameter may be compared against."""
    node = strip_string_methods(node)
    ok, value = read_literal(node)
    if ok:
        if isinstance(value, list):
            return [value] + [v for v in value if isinstance(v, (str, int, float, bool))]
        if isinstance(value, (tuple, set)):
            return [v for v in value if isinstance(v, (str, int, float, bool))]
        if isinstance(value, dict):
            return list(value.keys())
        return [value]
    if isinstance(node, ast.Name) and node.id in bindings:
        value = bindings[node.id]
        if isinstance(value, dict):
            return list(value.keys())
        if isinstance(value, (list, tuple, set)):
            return [v for v in value if isinstance(v, (str, int, float, bool))]
        return [value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'keys':
        return values_of(node.func.value, bindings, by_key)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return by_key.get(node.slice.value, [])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and node.args:
        inner = node.args[0]
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            return by_key.get(inner.value, [])
    return []

def collect_code_candidates(fn, params):
    """param -> literal values the code compares it with (==, in, startswith, dict lookups)."""
    bindings = collect_literal_bindings(fn)
    by_key = collect_dict_values_by_key(fn)
    found = {p: [] for p in params}
    def add(p, values):
        for v in values:
            if v not in found[p]:
                found[p].append(v)
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare):
            sides = [node.left] + list(node.comparators)
            for i, op in enumerate(node.ops):
                a, b = sides[i], sides[i + 1]
                pa, pb = param_of(a, params), param_of(b, params)
                if pa and not pb:
                    add(pa, values_of(b, bindings, by_key))
                elif pb and not pa:
                    if isinstance(op, (ast.In, ast.NotIn)):
                        ok, value = read_literal(a)
                        if ok and isinstance(value, (str, int, float)):
                            add(pb, [value, [value]])   # 'literal in param': a string holding it, or a list
                    else:
                        add(pb, values_of(a, bindings, by_key))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = param_of(node.func.value, params)
            if target and node.func.attr in ('startswith', 'endswith') and node.args:
                add(target, values_of(node.args[0], bindings, by_key))
            if node.func.attr == 'get' and node.args:
                p = param_of(node.args[0], params)
                if p:
                    add(p, values_of(node.func.value, bindings, by_key))
        elif isinstance(node, ast.Subscript):
            p = param_of(node.slice, params)
            if p:
                add(p, values_of(node.value, bindings, by_key))
    return found

def collect_object_keys(fn, params):
    """param -> string keys the code reads from it ('p['k']', 'p.get('k')', ''k' in p')."""
    keys = {p: [] for p in params}
    def add(p, k):
        if p and isinstance(k, str) and k not in keys[p]:
            keys[p].append(k)
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            add(param_of(node.value, params), node.slice.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get'
              and node.args and isinstance(node.args[0], ast.Constant)):
            add(param_of(node.func.value, params), node.args[0].value)
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            add(param_of(node.comparators[0], params), node.left.value)
    return keys

def build_date_ranges(keys, years):
    """Date-range objects '{start…: 'Y-01-01', end…: 'Y-12-31'}' for each year named in the question."""
    start = [k for k in keys if k.startswith('start')]
    end = [k for k in keys if k.startswith('end')]
    if not start or not end:
        return []
    return [{start[0]: f'{y}-01-01', end[0]: f'{y}-12-31'} for y in years]

def collect_tuple_key_calls(fn, params):
    """'key = (p1, p2, …)' then 'table.get(key)' / 'table[key]' over a dict literal with tuple keys:
    each tuple key of the table is one complete argument set."""
    bindings = collect_literal_bindings(fn)
    tuple_names = {}
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Tuple)):
            names = [param_of(e, params) for e in node.value.elts]
            if all(names):
                tuple_names[node.targets[0].id] = names
    calls = []
    for node in ast.walk(fn):
        table = key = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and node.args:
            table, key = node.func.value, node.args[0]
        elif isinstance(node, ast.Subscript):
            table, key = node.value, node.slice
        if not (isinstance(table, ast.Name) and table.id in bindings and isinstance(bindings[table.id], dict)):
            continue
        if isinstance(key, ast.Name) and key.id in tuple_names:
            names = tuple_names[key.id]
        elif isinstance(key, ast.Tuple) and all(param_of(e, params) for e in key.elts):
            names = [param_of(e, params) for e in key.elts]
        else:
            continue
        for table_key in bindings[table.id]:
            if isinstance(table_key, tuple) and len(table_key) == len(names):
                args = {n: v for n, v in zip(names, table_key) if v is not None}
                if args not in calls:
                    calls.append(args)
    return calls

def extract_example_calls(code, name, fn):
    """Calls 'name(...)' written by the data's author: in '# ...' comments or at module level."""
    positional = [p.arg for p in fn.args.posonlyargs + fn.args.args]
    call_nodes = []
    lines = code.split('\n')
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith('#') and (name + '(') in stripped:
            text = stripped.lstrip('#').strip()
            for j in range(i + 1, min(i + 12, len(lines)) + 1):
                try:
                    call_nodes.extend(ast.walk(ast.parse(text)))
                    break
                except SyntaxError:
                    if j < len(lines) and lines[j].strip().startswith('#'):
                        text += '\n' + lines[j].strip().lstrip('#')
                    else:
                        break
    module = ast.parse(code)
    for stmt in module.body:
        if not isinstance(stmt, ast.FunctionDef):
            call_nodes.extend(ast.walk(stmt))
    calls = []
    for call in call_nodes:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name):
            continue
        try:
            args = {}
            for i, arg in enumerate(call.args):
                args[positional[i]] = ast.literal_eval(arg)
            for kw in call.keywords:
                if kw.arg is None:
                    raise ValueError('**kwargs')
                args[kw.arg] = ast.literal_eval(kw.value)
        except Exception:
            continue
        if args not in calls:
            calls.append(args)
    return calls

def echoes_gold(args, gold, code_values):
    """True when an argument not written in the tool's own code already holds the expected answer."""
    pieces = [normalize_for_verify(p) for p in str(gold).split(', ')]
    for p, v in args.items():
        if v in code_values.get(p, []):
            continue
        text = normalize_for_verify(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
        if all(piece in text for piece in pieces):
            return True
    return False

def read_numbers(text):
    numbers = []
    for m in re.finditer(r'-?\d[\d,]*(?:\.\d+)?', str(text)):
        raw = m.group(0).replace(',', '')
        try:
            value = float(raw) if '.' in raw else int(raw)
        except ValueError:
            continue
        if value not in numbers:
            numbers.append(value)
    return numbers

def search_arguments(code, name, schema_props, gold, hint_values, question):
    """Find arguments whose observation verifies 'gold' without the arguments echoing it.
    Candidates, in this order: calls written in the code's comments or module level; complete argument
    sets read from tuple-keyed tables; then the product of per-parameter literals (the code's comparisons,
    schema enums, the task's other expected answers, numbers in the question), first with required
    parameters only, then with one optional parameter added."""
    tree = ast.parse(code)
    fn = find_function(tree, name)
    if fn is None:
        return None
    tried = 0
    required, optional = list_params(fn)
    found = collect_code_candidates(fn, required + optional)
    def attempt(args):
        nonlocal tried
        tried += 1
        output, is_error = pact_call_tool(code, name, json.dumps(args))
        if not is_error and verify_answer(output, gold) and not echoes_gold(args, gold, found):
            return output
        return None
    for args in extract_example_calls(code, name, fn):
        if attempt(args) is not None:
            return {'arguments': args, 'how': 'example', 'tried': tried}
    for args in collect_tuple_key_calls(fn, required + optional):
        if attempt(args) is not None:
            return {'arguments': args, 'how': 'search', 'tried': tried}
    object_keys = collect_object_keys(fn, required + optional)
    numbers = read_numbers(question)
    years = [v for v in numbers if isinstance(v, int) and 1000 <= v <= 2100]
    for h in hint_values:
        for v in read_numbers(h):
            if v not in numbers:
                numbers.append(v)
    def candidates(p, with_hints):
        schema = schema_props.get(p, {}) or {}
        kind = schema.get('type')
        values = []
        def add(v):
            if v not in values:
                values.append(v)
        for v in found.get(p, []):
            if kind == 'array' or not isinstance(v, list):
                add(v)
        for v in schema.get('enum', []) or []:
            add(v)
        if kind == 'boolean':
            add(True)
            add(False)
        if kind == 'object':
            for v in build_date_ranges(object_keys.get(p, []), years):
                add(v)
        if with_hints or kind in ('number', 'integer'):
            if kind in ('number', 'integer'):
                for v in numbers:
                    add(v)
            elif kind == 'array':
                for v in hint_values:
                    add([v])
            else:
                for v in hint_values:
                    add(v)
        return values
    required_lists = [candidates(p, True) for p in required]
    if any(len(v) == 0 for v in required_lists):
        return None
    combos = [dict(zip(required, c)) for c in itertools.islice(itertools.product(*required_lists), MAX_CALLS_PER_ANSWER)]
    for args in combos:
        if tried >= MAX_CALLS_PER_ANSWER:
            return None
        if attempt(args) is not None:
            return {'arguments': args, 'how': 'search', 'tried': tried}
    optional_values = [(p, v) for p in optional for v in candidates(p, False)]
    for args in combos:
        for p, v in optional_values:
            if tried >= MAX_CALLS_PER_ANSWER:
                return None
            extended = dict(args)
            extended[p] = v
            if attempt(extended) is not None:
                return {'arguments': extended, 'how': 'search', 'tried': tried}
    # every optional parameter the code compares with a literal, set together
    compared = [p for p in optional if found.get(p)]
    object_optional = [p for p in optional if (schema_props.get(p, {}) or {}).get('type') == 'object' and candidates(p, False)]
    together = compared + [p for p in object_optional if p not in compared]
    if together:
        lists = [candidates(p, False) for p in together]
        for args in combos:
            for values in itertools.product(*lists):
                if tried >= MAX_CALLS_PER_ANSWER:
                    return None
                extended = dict(args)
                extended.update(zip(together, values))
                if attempt(extended) is not None:
                    return {'arguments': extended, 'how': 'search', 'tried': tried}
    return None

def reconstruct_gold_calls(task_json):
    """Input: {codes, tools, unsolvedSet}. Output: one entry per expected answer, in unsolved-set order."""
    task = json.loads(task_json)
    props_by_tool = {t['function']['name']: t['function']['parameters'].get('properties', {}) for t in task['tools']}
    hints = []
    for answers in task['unsolvedSet'].values():
        for a in answers:
            if a not in hints:
                hints.append(a)
    results = []
    for name, answers in task['unsolvedSet'].items():
        for gold in answers:
            code = task['codes'].get(name)
            found = None
            if code is not None:
                try:
                    found = search_arguments(code, name, props_by_tool.get(name, {}), gold, hints, task.get('question', ''))
                except Exception:
                    found = None
            if found is not None:
                found['argumentsJson'] = json.dumps(found['arguments'], ensure_ascii=False)
            results.append({'name': name, 'gold': gold, 'found': found})
    return json.dumps(results, ensure_ascii=False)
`;
