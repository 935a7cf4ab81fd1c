// Draws Vega-Lite specs as Kibana's Vega plugin does, headless, with the data their requests got:
// stdin [{id, spec, values}] (values: what the spec's format.property takes of the answer), stdout
// [{id, warnings, items, error}], items counting the drawn items of each data mark (axes, legends
// and titles left out). The spec's data.url is replaced by the values: the request itself is run by
// the Python test. Run by tests/integration/test_history_stack.py in build/kibana-vega.
import * as vega from 'vega';
import * as vl from 'vega-lite';

function marks(node, found) {
  if (!node) return found;
  if (node.marktype && node.role === 'mark') {
    found[node.marktype] = (found[node.marktype] || 0) + (node.items || []).length;
  }
  for (const item of node.items || []) {
    for (const child of item.items || []) marks(child, found);
  }
  return found;
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const {id, spec, values} of JSON.parse(input)) {
  const warnings = [];
  const logger = {
    level() { return logger; },
    warn: (...a) => { warnings.push(a.join(' ')); return logger; },
    error: (...a) => { warnings.push('error: ' + a.join(' ')); return logger; },
    info: () => logger,
    debug: () => logger,
  };
  try {
    const compiled = vl.compile({...spec, data: {values}, width: 400, height: 200}, {logger}).spec;
    const view = new vega.View(vega.parse(compiled), {renderer: 'none', logger});
    await view.runAsync();
    await view.toSVG();
    out.push({id, warnings, items: marks(view.scenegraph().root, {})});
  } catch (e) {
    out.push({id, warnings, error: String((e && e.stack) || e)});
  }
}
process.stdout.write(JSON.stringify(out));
