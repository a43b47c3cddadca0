// The code editor of the endpointkit editor page: CodeMirror 6 with SQL
// (in the dialect of the endpoint's engine) or JSON (insight queries),
// completion of the project's tables, columns and {variables.…}, the
// placeholders marked, and an error of the server marked at its line and
// column. scripts/editor-bundle bundles this file with esbuild into
// ../static/editor.bundle.js, which app.js uses through
// window.endpointkitCodeEditor; nothing here talks to the API.

import { EditorView, basicSetup } from 'codemirror';
import { Compartment, EditorState, Prec, Annotation, Transaction } from '@codemirror/state';
import { keymap, placeholder, Decoration, MatchDecorator, ViewPlugin } from '@codemirror/view';
import { syntaxTree } from '@codemirror/language';
import { sql, SQLDialect, SQLite, PostgreSQL, MySQL, MariaSQL, StandardSQL } from '@codemirror/lang-sql';
import { json } from '@codemirror/lang-json';
import { setDiagnostics } from '@codemirror/lint';

// ClickHouse: lang-sql has no dialect of it; this one knows its keywords,
// types and the functions an analytics query uses most, its backslash
// escapes and its two identifier quotes.
const ClickHouse = SQLDialect.define({
  keywords: 'select from where prewhere group by order limit offset with totals rollup cube having array join left right inner outer full cross any all asof semi anti global using on as and or not in between like ilike is null case when then else end distinct union except intersect final sample settings format interval exists desc asc nulls first last fill step to true false over partition rows range unbounded preceding following current row window qualify',
  types: 'uint8 uint16 uint32 uint64 uint128 uint256 int8 int16 int32 int64 int128 int256 float32 float64 decimal decimal32 decimal64 decimal128 string fixedstring date date32 datetime datetime64 uuid array tuple map nullable lowcardinality bool boolean enum8 enum16 json ipv4 ipv6 nothing',
  builtin: 'count countif sum sumif avg avgif min max uniq uniqexact uniqcombined any anylast argmin argmax groupArray grouparray quantile quantiles median topk if multiif arrayjoin tostring todate todatetime totypename now today yesterday tostartofday tostartofhour tostartofweek tostartofmonth tostartofyear toyyyymm toyyyymmdd datediff dateadd datesub formatdatetime parsedatetimebesteffort jsonextractstring jsonextractint jsonextractfloat jsonextractbool jsonhas visitparamextractstring lower upper length substring concat replaceall splitbychar coalesce ifnull nullif round floor ceil abs greatest least',
  backslashEscapes: true,
  identifierQuotes: '`"',
  operatorChars: '*+-%<>!=&|/^',
});

// dialects maps the engine names of package engine (Engine.Name) to the
// dialect that highlights and completes their SQL.
const dialects = {
  sqlite: SQLite,
  postgresql: PostgreSQL,
  postgres: PostgreSQL,
  mysql: MySQL,
  mariadb: MariaSQL,
  clickhouse: ClickHouse,
  chdb: ClickHouse,
};

// dialectOf returns the dialect of an engine name, StandardSQL when the
// name is unknown or empty.
function dialectOf(name) {
  return dialects[String(name || '').toLowerCase()] || StandardSQL;
}

// quiet marks a change made by the page itself (a new kind, an endpoint
// loaded, the insight form's JSON), which onChange does not report.
const quiet = Annotation.define();

// placeholderMark marks each {variables.x} outside strings, quoted names
// and comments, where package placeholder reads one.
const placeholderMarker = new MatchDecorator({
  regexp: /\{\s*variables\s*\.\s*[A-Za-z_][A-Za-z0-9_]*\s*\}/g,
  decorate(add, from, to, match, view) {
    const node = syntaxTree(view.state).resolveInner(from, 1);
    if (/String|Quoted|Comment/.test(node.name)) {
      return;
    }
    add(from, to, Decoration.mark({ class: 'cm-ek-variable', attributes: { 'data-variable': match[0].replace(/[{}\s]|variables\./g, '') } }));
  },
});
const placeholderMarks = ViewPlugin.fromClass(class {
  constructor(view) { this.marks = placeholderMarker.createDeco(view); }
  update(u) { this.marks = placeholderMarker.updateDeco(u, this.marks); }
}, { decorations: (v) => v.marks });

// offsetOf returns the position in doc of a 1-based line and column, the
// column counting characters (code points), as the server counts them;
// clamped into the document.
function offsetOf(doc, line, column) {
  const l = doc.line(Math.min(Math.max(1, line | 0), doc.lines));
  const pos = l.from;
  let n = Math.max(1, column | 0) - 1;
  const text = l.text;
  let i = 0;
  while (n > 0 && i < text.length) {
    const c = text.codePointAt(i);
    i += c > 0xffff ? 2 : 1;
    n--;
  }
  return pos + i;
}

// wordEnd is where the token at pos ends on its line: a name, a quoted
// text or one character.
function wordEnd(doc, pos) {
  const l = doc.lineAt(pos);
  const rest = l.text.slice(pos - l.from);
  const m = /^(?:[A-Za-z0-9_$]+|'(?:[^'\\]|\\.|'')*'?|"[^"]*"?|`[^`]*`?|\S)/.exec(rest);
  return pos + (m ? m[0].length : 0);
}

// plainSpaces turns the no-break spaces of typed or pasted text into
// spaces: a browser types one at the end of a line, a web page's text
// holds them, and the server refuses one outside quotes (engines differ
// on what is a space).
const plainSpaces = EditorState.transactionFilter.of((tr) => {
  if (!tr.docChanged || !tr.isUserEvent('input')) { return tr; }
  let nbsp = false;
  tr.changes.iterChanges((fa, ta, fb, tb, inserted) => { if (inserted.toString().includes('\u00a0')) { nbsp = true; } });
  if (!nbsp) { return tr; }
  const changes = [];
  tr.changes.iterChanges((fromA, toA, fb, tb, inserted) => {
    changes.push({ from: fromA, to: toA, insert: inserted.toString().replace(/\u00a0/g, ' ') });
  });
  // One character for one: the selection after the change stands.
  return { changes, selection: tr.selection, effects: tr.effects, scrollIntoView: tr.scrollIntoView, annotations: [Transaction.userEvent.of(tr.annotation(Transaction.userEvent))] };
});

// theme is the editor's look. The editor lives in a shadow root, whose
// styles CodeMirror adopts as constructed style sheets: the page's policy
// (style-src 'self') refuses the <style> elements it would add to the
// document, and the page's style sheet does not reach into the root.
const theme = EditorView.theme({
  '&': { border: '1px solid #9aa1b2', borderRadius: '4px', background: '#fff', fontSize: '14px', maxHeight: '26rem', color: '#1d2330' },
  '&.cm-focused': { outline: '3px solid #f2a900', outlineOffset: '2px' },
  '.cm-scroller': { overflow: 'auto', lineHeight: '1.45', fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace' },
  '.cm-content, .cm-gutter': { minHeight: '11rem' },
  '.cm-gutters': { background: '#f3f4f8', borderRight: '1px solid #d9dce6', color: '#5b6478' },
  '.cm-placeholder': { color: '#5b6478' },
  '.cm-ek-variable': { background: '#e6efff', borderRadius: '3px', boxShadow: 'inset 0 -1px 0 #1f5fd1' },
  '.cm-tooltip': { fontSize: '13px' },
  '.cm-diagnostic-error': { borderLeftColor: '#b3261e' },
});

// create makes the editor in a shadow root of opts.parent, which keeps
// the focus (delegatesFocus: focusing it focuses the text):
//   label, description: the accessible name and description of the text;
//   onChange(text): the user changed the text;
//   onRun(): Ctrl+Enter (Cmd+Enter on a Mac).
// It returns the handle app.js uses.
function create(opts) {
  const language = new Compartment();
  const hint = new Compartment();
  const attrs = new Compartment();
  const attributes = (label) => EditorView.contentAttributes.of({
    'aria-label': label || 'Query',
    'aria-description': opts.description || '',
    spellcheck: 'false',
  });
  let mode = 'sql';
  let dialect = dialectOf(opts.dialect);
  let tables = [];
  let variables = [];

  const sqlLanguage = () => sql({ dialect, upperCaseKeywords: true, schema: schemaOf(tables) });
  const languageOf = () => (mode === 'json' ? json() : sqlLanguage());

  // The tables and their columns: "events" completes as a table, its
  // columns after "events." (lang-sql) and, unqualified, anywhere a name
  // goes (columnSource).
  function schemaOf(list) {
    const out = {};
    list.forEach((t) => {
      out[t.name] = (t.columns || []).map((c) => ({ label: c.name, type: 'property', detail: c.type || '' }));
    });
    return out;
  }

  function columnSource(ctx) {
    if (mode !== 'sql') { return null; }
    const word = ctx.matchBefore(/[A-Za-z_][A-Za-z0-9_$]*/);
    if (!word && !ctx.explicit) { return null; }
    const from = word ? word.from : ctx.pos;
    const before = ctx.state.sliceDoc(Math.max(0, from - 1), from);
    if (before === '.' || before === '{') { return null; }
    // After FROM or JOIN a table goes, which lang-sql offers.
    if (/\b(?:from|join|into|update|table)\s+$/i.test(ctx.state.sliceDoc(Math.max(0, from - 40), from))) { return null; }
    const node = syntaxTree(ctx.state).resolveInner(ctx.pos, -1);
    if (/String|Quoted|Comment/.test(node.name)) { return null; }
    const options = [];
    const seen = new Set();
    tables.forEach((t) => {
      (t.columns || []).forEach((c) => {
        if (seen.has(c.name)) { return; }
        seen.add(c.name);
        options.push({ label: c.name, type: 'property', detail: (c.type ? c.type + ' · ' : '') + t.name, boost: 1 });
      });
    });
    return options.length ? { from, options, validFor: /^[A-Za-z0-9_$]*$/ } : null;
  }

  // variableSource completes "{" and what follows it with the defined
  // variables' placeholders.
  function variableSource(ctx) {
    if (mode !== 'sql') { return null; }
    // "{", "{variables.", or "{" and part of a code name (matched fuzzily).
    const m = ctx.matchBefore(/\{[\sA-Za-z0-9_.]*$/);
    if (!m) { return null; }
    const node = syntaxTree(ctx.state).resolveInner(m.from, 1);
    if (/String|Quoted|Comment/.test(node.name)) { return null; }
    const options = variables.map((v) => {
      const label = '{variables.' + v.code_name + '}';
      return {
        label,
        type: 'variable',
        detail: v.type || '',
        info: v.name && v.name !== v.code_name ? v.name : undefined,
        apply(view, completion, from, to) {
          // closeBrackets put a '}' after the cursor when '{' was typed.
          const end = view.state.sliceDoc(to, to + 1) === '}' ? to + 1 : to;
          view.dispatch({ changes: { from, to: end, insert: label }, selection: { anchor: from + label.length }, userEvent: 'input.complete' });
        },
      };
    });
    return options.length ? { from: m.from, options, filter: true } : null;
  }

  const shadow = opts.parent.attachShadow({ mode: 'open', delegatesFocus: true });
  const mount = document.createElement('div');
  shadow.appendChild(mount);
  const view = new EditorView({
    parent: mount,
    root: shadow,
    state: EditorState.create({
      doc: opts.text || '',
      extensions: [
        Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => { if (opts.onRun) { opts.onRun(); } return true; } }])),
        basicSetup,
        theme,
        plainSpaces,
        EditorView.lineWrapping,
        language.of(languageOf()),
        hint.of(placeholder(opts.placeholder || '')),
        placeholderMarks,
        EditorState.languageData.of(() => [{ autocomplete: variableSource }, { autocomplete: columnSource }]),
        attrs.of(attributes(opts.label)),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) { return; }
          if (u.transactions.every((tr) => tr.annotation(quiet))) { return; }
          // An error marked on the old text no longer stands.
          if (markedError) { clearError(); }
          if (opts.onChange) { opts.onChange(u.state.doc.toString()); }
        }),
      ],
    }),
  });

  // The host delegates its focus (a click on its label, Tab, focus())
  // to the first focusable element of its root, which is CodeMirror's
  // scroller, where keys type nothing: the text takes it instead.
  shadow.addEventListener('focusin', (e) => {
    if (e.target === view.scrollDOM) { view.focus(); }
  });

  let markedError = null;
  function clearError() {
    markedError = null;
    view.dispatch(setDiagnostics(view.state, []));
  }

  function reconfigure() {
    view.dispatch({ effects: language.reconfigure(languageOf()) });
  }

  return {
    view,
    // text is the editor's text.
    text() { return view.state.doc.toString(); },
    // setText replaces the text, the cursor at its end; the change is the
    // page's own unless user is true.
    setText(text, user) {
      const doc = String(text == null ? '' : text);
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: doc },
        selection: { anchor: doc.length },
        annotations: user ? [] : [quiet.of(true)],
        userEvent: user ? 'input.paste' : undefined,
      });
    },
    focus() { view.focus(); },
    // setMode switches between 'sql' and 'json', with the placeholder
    // text and the accessible name of each.
    setMode(m, placeholderText, label) {
      mode = m === 'json' ? 'json' : 'sql';
      view.dispatch({ effects: [language.reconfigure(languageOf()), hint.reconfigure(placeholder(placeholderText || '')), attrs.reconfigure(attributes(label))] });
    },
    // setDialect takes an engine name (sqlite, postgresql, mysql,
    // mariadb, clickhouse).
    setDialect(name) { dialect = dialectOf(name); reconfigure(); },
    dialectName() {
      return Object.keys(dialects).find((k) => dialects[k] === dialect) || 'standard';
    },
    // setSchema takes the results of GET schema.
    setSchema(list) { tables = Array.isArray(list) ? list.filter((t) => t && t.name) : []; reconfigure(); },
    // setVariables takes the project's variables (GET insight_variables).
    setVariables(list) { variables = Array.isArray(list) ? list.filter((v) => v && v.code_name) : []; },
    // markError underlines the token at 1-based line and column with the
    // message, until the text changes; null clears it.
    markError(err) {
      if (!err) { clearError(); return null; }
      const doc = view.state.doc;
      const from = offsetOf(doc, err.line, err.column);
      let to = wordEnd(doc, from);
      if (to === from) { to = Math.min(doc.length, from + 1); }
      markedError = { line: err.line, column: err.column, message: err.message, source: err.source || 'server', from, to };
      view.dispatch(setDiagnostics(view.state, [{ from, to, severity: 'error', message: err.message, source: err.source || 'server' }]));
      return markedError;
    },
    // marked is the error marked now, with its range; null when none.
    marked() { return markedError ? Object.assign({}, markedError, { text: view.state.sliceDoc(markedError.from, markedError.to) }) : null; },
    // revealError scrolls the marked error into view and puts the cursor
    // on it.
    revealError() {
      if (!markedError) { return; }
      view.dispatch({ selection: { anchor: markedError.from }, scrollIntoView: true });
      view.focus();
    },
  };
}

window.endpointkitCodeEditor = { create, dialectOf: (name) => Object.keys(dialects).find((k) => dialects[k] === dialectOf(name)) || 'standard' };
