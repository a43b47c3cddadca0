// endpointkit editor: plain JavaScript; the query is written in CodeMirror 6,
// which editor.bundle.js (built from web/ by scripts/editor-bundle) gives as
// window.endpointkitCodeEditor.
//
// The page talks to the endpointkit HTTP API with the user's API key, kept
// in sessionStorage only (this tab, until it closes). Every request goes
// through api(); every failure is shown where it arose: under the form or
// input it concerns, with the API's "detail" text as it is.
(function () {
  'use strict';

  var $ = function (id) { return document.getElementById(id); };
  var metaContent = function (name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute('content') : '';
  };
  var API = (metaContent('endpointkit-api') || '').replace(/\/+$/, '');
  var DEFAULT_PROJECT = metaContent('endpointkit-project') || '1';
  var DIALECT = metaContent('endpointkit-dialect') || '';
  var DIALECT_NAMES = { sqlite: 'SQLite', postgresql: 'PostgreSQL', mysql: 'MySQL', mariadb: 'MariaDB', clickhouse: 'ClickHouse', standard: 'standard SQL' };
  var SQL_PLACEHOLDER = 'SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event';
  var STORE_KEY = 'endpointkit.apiKey';
  var STORE_PROJECT = 'endpointkit.project';
  var SQL = 'HogQLQuery';
  var MAX_SERIES = 12;

  // ------------------------------------------------------------------
  // Placeholders: the same reading as package placeholder (see its
  // documentation). Outside string literals ('...', with doubled quotes and
  // backslash escapes), quoted identifiers ("..." and `...`) and comments
  // (-- and /* */), a '{' followed by "variables" and '.' starts a
  // placeholder, which must then be a code name and '}'.

  var SPACE = 1, IDENT = 2, QUOTE = 3, BRACE = 4, DASH = 5, SLASH = 6, OTHER = 0;

  function isNameStart(c) { return c === 95 || (c >= 65 && c <= 90) || (c >= 97 && c <= 122); }
  function isNameChar(c) { return isNameStart(c) || (c >= 48 && c <= 57); }
  function classOf(c) {
    if (c === 32 || (c >= 9 && c <= 13)) { return SPACE; }
    if (isNameChar(c) || c === 36 || c >= 0x80) { return IDENT; }
    if (c === 39 || c === 34 || c === 96) { return QUOTE; }
    if (c === 123) { return BRACE; }
    if (c === 45) { return DASH; }
    if (c === 47) { return SLASH; }
    return OTHER;
  }
  function skipSpace(src, i) {
    while (i < src.length && classOf(src.charCodeAt(i)) === SPACE) { i++; }
    return i;
  }
  // skipQuoted returns the index past the quoted text opened at i, or -1.
  function skipQuoted(src, i) {
    var q = src.charCodeAt(i);
    for (var j = i + 1; j < src.length; j++) {
      var c = src.charCodeAt(j);
      if (c === q) {
        if (j + 1 < src.length && src.charCodeAt(j + 1) === q) { j++; continue; }
        return j + 1;
      }
      if (c === 92 && q === 39) { j++; }
    }
    return -1;
  }
  // commentEnd returns the index past a comment opened at i, -1 for a block
  // comment never closed, or null when no comment opens at i.
  function commentEnd(src, i) {
    if (i + 1 >= src.length) { return null; }
    var two = src.substr(i, 2);
    if (two === '--') {
      var nl = src.indexOf('\n', i);
      return nl < 0 ? src.length : nl + 1;
    }
    if (two === '/*') {
      var end = src.indexOf('*/', i + 2);
      return end < 0 ? -1 : end + 2;
    }
    return null;
  }
  function position(src, at) {
    var before = src.slice(0, at);
    var line = before.split('\n').length;
    var lineStart = before.lastIndexOf('\n') + 1;
    return { line: line, column: Array.from(src.slice(lineStart, at)).length + 1 };
  }
  // placeholderAt reads a placeholder whose '{' is at i: {end: -1} when the
  // brace starts none, {error, at} when it is malformed.
  function placeholderAt(src, i) {
    var n = src.length;
    var j = skipSpace(src, i + 1);
    if (src.substr(j, 9) !== 'variables') { return { end: -1 }; }
    j += 9;
    if (j < n && classOf(src.charCodeAt(j)) === IDENT) { return { end: -1 }; }
    j = skipSpace(src, j);
    if (j >= n || src[j] !== '.') { return { end: -1 }; }
    j = skipSpace(src, j + 1);
    if (j >= n) { return { error: 'placeholder is never closed: expected a code name and \'}\'', at: i }; }
    if (!isNameStart(src.charCodeAt(j))) {
      if (src[j] === '}') { return { error: 'missing code name after "variables."', at: j }; }
      return { error: 'expected a code name after "variables.", found ' + JSON.stringify(src[j]), at: j };
    }
    var start = j;
    while (j < n && isNameChar(src.charCodeAt(j))) { j++; }
    var name = src.slice(start, j);
    j = skipSpace(src, j);
    if (j >= n) { return { error: 'placeholder {variables.' + name + ' is never closed: expected \'}\'', at: i }; }
    if (src[j] !== '}') { return { error: 'unexpected ' + JSON.stringify(src[j]) + ' after code name "' + name + '": expected \'}\'', at: j }; }
    return { name: name, end: j + 1 };
  }

  // scanPlaceholders returns the distinct code names of src in order of
  // first appearance, and the first syntax error (null when none) with its
  // line and column.
  function scanPlaceholders(src) {
    var names = [];
    var seen = Object.create(null);
    var fail = function (at, message) {
      var p = position(src, at);
      return { names: names, error: { message: message, line: p.line, column: p.column } };
    };
    var i = 0;
    while (i < src.length) {
      var cl = classOf(src.charCodeAt(i));
      if (cl === SPACE) { i++; continue; }
      if (cl === IDENT) {
        i++;
        while (i < src.length && classOf(src.charCodeAt(i)) === IDENT) { i++; }
        continue;
      }
      if (cl === QUOTE) {
        var qend = skipQuoted(src, i);
        if (qend < 0) {
          return fail(i, (src[i] === '\'' ? 'string literal' : 'quoted identifier') + ' starting with ' + src[i] + ' is never closed');
        }
        i = qend;
        continue;
      }
      if (cl === DASH || cl === SLASH) {
        var cend = commentEnd(src, i);
        if (cend === -1) { return fail(i, 'block comment /* is never closed'); }
        if (cend !== null) { i = cend; continue; }
      }
      if (cl === BRACE) {
        var p = placeholderAt(src, i);
        if (p.error) { return fail(p.at, p.error); }
        if (p.end >= 0) {
          if (!seen[p.name]) { seen[p.name] = true; names.push(p.name); }
          i = p.end;
          continue;
        }
      }
      i++;
    }
    return { names: names, error: null };
  }

  // insightVariables names the run-time variables of an insight query: each
  // breakdown property, then date_from and date_to (package insight). A
  // LifecycleQuery has no breakdowns: its dates only.
  function insightVariables(q) {
    var names = [];
    var bf = q && q.breakdownFilter;
    if (bf && Array.isArray(bf.breakdowns)) {
      bf.breakdowns.forEach(function (b) { if (b && typeof b.property === 'string') { names.push(b.property); } });
    } else if (bf && typeof bf.breakdown === 'string' && bf.breakdown !== '') {
      names.push(bf.breakdown);
    }
    return names.concat(['date_from', 'date_to']);
  }

  // ------------------------------------------------------------------
  // State.

  var samples = {
    HogQLQuery: '',
    TrendsQuery: JSON.stringify({
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      interval: 'day',
      dateRange: { date_from: '2025-05-01', date_to: '2025-05-31' },
      breakdownFilter: { breakdown: '$browser' }
    }, null, 2),
    RetentionQuery: JSON.stringify({
      kind: 'RetentionQuery',
      retentionFilter: {
        targetEntity: { id: 'signed_up', type: 'events' },
        returningEntity: { id: '$pageview', type: 'events' },
        period: 'Day', totalIntervals: 7
      },
      dateRange: { date_from: '2025-05-01', date_to: '2025-05-31' }
    }, null, 2),
    LifecycleQuery: JSON.stringify({
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      interval: 'week',
      dateRange: { date_from: '2025-03-03', date_to: '2025-05-31' }
    }, null, 2)
  };

  var state = {
    key: '',
    project: '',
    kind: SQL,
    texts: { HogQLQuery: '', TrendsQuery: samples.TrendsQuery, RetentionQuery: samples.RetentionQuery, LifecycleQuery: samples.LifecycleQuery },
    variables: [],          // the project's variables
    testValues: {},         // by variable id (SQL) or 'insight:' + name
    placeholders: [],
    valueErrors: {},        // by test value key: the detail of a refused value
    endpoints: [],
    runTarget: null,        // the endpoint the run form runs
    runValues: {},          // the run form's values, by variable name
    versions: [],
    runSchema: null,        // the run form's fields, from the server's OpenAPI document
    editing: null,          // the saved endpoint the editor edits (saving makes a new version)
    confirmAction: null     // what the confirmation's button does
  };

  // ------------------------------------------------------------------
  // The API.

  function base() { return API + '/api/projects/' + encodeURIComponent(state.project); }

  // APIError is a failure answered by the API: detail, code and attr as
  // it sent them.
  function APIError(status, body) {
    this.status = status;
    this.detail = (body && body.detail) || ('The server answered HTTP ' + status + '.');
    this.code = body && body.code;
    this.attr = body && body.attr;
    this.message = this.detail;
    this.where = errorPosition(body);
  }

  // errorPosition is where in the query an error of the API points: its
  // "line" and "column" fields, or else the "line N, column M" its detail
  // says; null when it names no place.
  function errorPosition(body) {
    if (!body) { return null; }
    var line = Number(body.line), column = Number(body.column);
    if (Number.isInteger(line) && line > 0 && Number.isInteger(column) && column > 0) { return { line: line, column: column }; }
    var m = /\bline (\d+), column (\d+)/.exec(String(body.detail || ''));
    return m ? { line: parseInt(m[1], 10), column: parseInt(m[2], 10) } : null;
  }

  function api(method, path, body) {
    var headers = { Authorization: 'Bearer ' + state.key, Accept: 'application/json' };
    var init = { method: method, headers: headers, credentials: 'omit', cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(base() + path, init).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        if (text) {
          try { data = JSON.parse(text); } catch (e) { data = null; }
        }
        if (!res.ok) {
          var err = new APIError(res.status, data);
          if (res.status === 401) { signOut('The API key was refused: ' + err.detail); }
          throw err;
        }
        return data;
      });
    }, function () {
      throw new APIError(0, { detail: 'The API could not be reached at ' + (API || location.origin) + '.' });
    });
  }

  // ------------------------------------------------------------------
  // The code editor (CodeMirror, from editor.bundle.js).

  var code = null;
  function queryText() { return code.text(); }
  function setQueryText(text) { code.setText(text); }

  // markQueryError underlines in the query where err points, when the
  // editor holds SQL (an insight's positions are not in its JSON).
  function markQueryError(err, source) {
    if (!err || !err.where || state.kind !== SQL) { return; }
    code.markError({ line: err.where.line, column: err.where.column, message: err.detail || err.message, source: source });
  }

  // ------------------------------------------------------------------
  // Helpers of the DOM.

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === 'text') { e.textContent = attrs[k]; } else if (k === 'className') { e.className = attrs[k]; } else { e.setAttribute(k, attrs[k]); }
      });
    }
    (children || []).forEach(function (c) { if (c) { e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); } });
    return e;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }
  function setError(id, err) { $(id).textContent = err ? (err.detail || err.message || String(err)) : ''; }
  function busy(button, on) { button.disabled = on; button.setAttribute('aria-busy', on ? 'true' : 'false'); }
  function display(v) {
    if (v === null || v === undefined) { return 'NULL'; }
    if (typeof v === 'object') { return JSON.stringify(v); }
    return String(v);
  }
  function shellQuote(s) { return '\'' + s.replace(/'/g, '\'\\\'\'') + '\''; }
  function apiOrigin() {
    try { return new URL(API || '/', location.href).origin; } catch (e) { return location.origin; }
  }

  // ------------------------------------------------------------------
  // Sign in.

  function showLogin(message) {
    $('app').hidden = true;
    $('session').hidden = true;
    $('login').hidden = false;
    $('project').value = state.project || sessionStorage.getItem(STORE_PROJECT) || DEFAULT_PROJECT;
    $('login-error').textContent = message || '';
    $('api-key').focus();
  }

  function signOut(message) {
    sessionStorage.removeItem(STORE_KEY);
    state.key = '';
    showLogin(message);
  }

  function startApp() {
    $('login').hidden = true;
    $('app').hidden = false;
    $('session').hidden = false;
    $('session-project').textContent = state.project;
    return Promise.all([loadVariables(), loadEndpoints(), loadSchema()]).then(function () {
      if (!$('app').hidden) { code.focus(); }
    });
  }

  function onLogin(ev) {
    ev.preventDefault();
    var key = $('api-key').value.trim();
    var project = $('project').value.trim();
    if (!key) { $('login-error').textContent = 'Enter an API key.'; $('api-key').focus(); return; }
    if (!project) { $('login-error').textContent = 'Enter a project id.'; $('project').focus(); return; }
    state.key = key;
    state.project = project;
    var button = ev.target.querySelector('button[type=submit]');
    busy(button, true);
    // A cheap call checks the key for the project before anything is kept.
    api('GET', '/insight_variables/').then(function () {
      sessionStorage.setItem(STORE_KEY, key);
      sessionStorage.setItem(STORE_PROJECT, project);
      $('api-key').value = '';
      return startApp();
    }, function (err) {
      state.key = '';
      showLogin(err.status === 403 ? 'This key may not use project ' + project + ': ' + err.detail : err.detail);
    }).then(function () { busy(button, false); });
  }

  // ------------------------------------------------------------------
  // Variables.

  function loadVariables() {
    return api('GET', '/insight_variables/').then(function (body) {
      state.variables = (body && body.results) || [];
      code.setVariables(state.variables);
      renderVariables();
    }, function (err) { setError('variable-error', err); });
  }

  function variableByCode(code) {
    for (var i = 0; i < state.variables.length; i++) {
      if (state.variables[i].code_name === code) { return state.variables[i]; }
    }
    return null;
  }
  function variableByID(id) {
    for (var i = 0; i < state.variables.length; i++) {
      if (state.variables[i].id === id) { return state.variables[i]; }
    }
    return null;
  }

  // attachedVariables are the project's variables the SQL uses, in the
  // order of their placeholders.
  function attachedVariables() {
    return state.placeholders.map(variableByCode).filter(Boolean);
  }

  // wireValue turns the text of a value input into what the API takes: a
  // list of a multi-valued List, the text itself otherwise (the API coerces
  // it to the variable's type); undefined when empty.
  function wireValue(text, v) {
    if (text === undefined || text === '') { return undefined; }
    if (v && v.type === 'List' && v.is_multi) {
      return text.split(',').map(function (s) { return s.trim(); }).filter(function (s) { return s !== ''; });
    }
    return text;
  }

  // valueInput is the input of one value, labelled; its value is kept in
  // store[key] as it is typed.
  function valueInput(id, labelText, v, store, key) {
    var input;
    if (v && v.type === 'Boolean') {
      input = el('select', { id: id }, [el('option', { value: '', text: '(none)' }), el('option', { text: 'true' }), el('option', { text: 'false' })]);
    } else if (v && v.type === 'List' && !v.is_multi && v.values && v.values.length) {
      input = el('select', { id: id }, [el('option', { value: '', text: '(none)' })].concat(v.values.map(function (o) { return el('option', { text: o }); })));
    } else if (v && v.type === 'Date') {
      // A date picker; its value is YYYY-MM-DD, which a Date variable takes.
      input = el('input', { id: id, type: 'date', autocomplete: 'off' });
    } else {
      input = el('input', { id: id, type: 'text', spellcheck: 'false', autocomplete: 'off' });
      if (v && v.type === 'Number') { input.setAttribute('inputmode', 'decimal'); }
      if (v && v.type === 'List' && v.is_multi) { input.setAttribute('placeholder', (v.values || []).slice(0, 3).join(', ')); }
    }
    input.value = store[key] || '';
    input.addEventListener('input', function () { store[key] = input.value; });
    input.addEventListener('change', function () { store[key] = input.value; });
    var label = el('label', { 'for': id, className: 'visually-hidden', text: labelText });
    return { input: input, label: label };
  }

  function testKey(v) { return v.id; }

  // renderVariables draws the Variables tab from the query text: each
  // placeholder with its variable, or marked when it has none, and an input
  // for its test value.
  function renderVariables() {
    clearTimeout(renderTimer);
    // The inputs are drawn anew; the one that had the focus gets it back.
    var focused = document.activeElement && document.activeElement.id;
    var text = queryText();
    var tbody = $('placeholders').querySelector('tbody');
    clear(tbody);
    $('scan-error').textContent = '';
    var rows = [];
    var missing = 0;
    if (state.kind === SQL) {
      var scan = scanPlaceholders(text);
      state.placeholders = scan.names;
      var marked = code.marked();
      if (scan.error) {
        $('scan-error').textContent = 'Placeholder syntax at line ' + scan.error.line + ', column ' + scan.error.column + ': ' + scan.error.message;
        // Marked in the text too, unless the server's error is.
        if (!marked || marked.source === 'placeholders') {
          code.markError({ line: scan.error.line, column: scan.error.column, message: 'Placeholder syntax: ' + scan.error.message, source: 'placeholders' });
        }
      } else if (marked && marked.source === 'placeholders') {
        code.markError(null);
      }
      scan.names.forEach(function (name, i) {
        var v = variableByCode(name);
        var tr = el('tr', { 'data-placeholder': name });
        tr.appendChild(el('td', null, [el('code', { text: '{variables.' + name + '}' })]));
        if (!v) {
          missing++;
          tr.className = 'missing';
          var add = el('button', { type: 'button', className: 'add-for', 'data-code': name, text: 'Add variable' });
          add.setAttribute('aria-label', 'Add a variable for ' + name);
          add.addEventListener('click', function () { prefillVariable(name); });
          tr.appendChild(el('td', { colspan: '4' }, [el('span', { className: 'missing-mark', text: 'No variable' }), ' ', add]));
        } else {
          tr.appendChild(el('td', { 'data-label': 'Variable', text: v.name }));
          tr.appendChild(el('td', { 'data-label': 'Type', text: v.type + (v.is_multi ? ' (several)' : '') }));
          tr.appendChild(el('td', { 'data-label': 'Default', text: v.default_value === null || v.default_value === undefined ? '—' : display(v.default_value) }));
          var f = valueInput('test-' + name, 'Test value for ' + name, v, state.testValues, testKey(v));
          var td = el('td', { 'data-label': 'Test value' }, [f.label, f.input]);
          var verr = state.valueErrors[testKey(v)];
          if (verr) {
            f.input.setAttribute('aria-invalid', 'true');
            var pid = 'test-' + name + '-error';
            f.input.setAttribute('aria-describedby', pid);
            td.appendChild(el('p', { id: pid, className: 'field-error', text: verr }));
          }
          tr.appendChild(td);
        }
        rows.push(tr);
      });
    } else {
      var q = null;
      try { q = JSON.parse(text); } catch (e) { q = null; }
      state.placeholders = [];
      insightVariables(q).forEach(function (name, i) {
        var isDate = name === 'date_from' || name === 'date_to';
        var pseudo = { type: isDate ? 'Date' : 'String' };
        var tr = el('tr', { 'data-placeholder': name });
        tr.appendChild(el('td', null, [el('code', { text: name })]));
        tr.appendChild(el('td', { text: isDate ? 'date bound (optional)' : 'breakdown (optional)' }));
        tr.appendChild(el('td', { text: pseudo.type }));
        tr.appendChild(el('td', { text: '—' }));
        var f = valueInput('itest-' + i, 'Test value for ' + name, pseudo, state.testValues, 'insight:' + name);
        tr.appendChild(el('td', null, [f.label, f.input]));
        rows.push(tr);
      });
    }
    rows.forEach(function (r) { tbody.appendChild(r); });
    $('placeholders').hidden = rows.length === 0;
    $('no-placeholders').hidden = rows.length > 0;
    var badge = $('missing-count');
    badge.hidden = missing === 0;
    badge.textContent = missing ? String(missing) : '';
    badge.setAttribute('aria-label', missing + ' without a variable');
    if (focused && /^i?test-/.test(focused) && $(focused) && document.activeElement !== $(focused)) { $(focused).focus(); }
  }

  function prefillVariable(code) {
    selectTab('tab-variables');
    $('var-code').value = code;
    $('var-name').value = code.replace(/_/g, ' ').replace(/^./, function (c) { return c.toUpperCase(); });
    $('var-name').focus();
    $('var-name').select();
  }

  function onTypeChange() {
    var list = $('var-type').value === 'List';
    // A Date's default is picked from a calendar.
    $('var-default').type = $('var-type').value === 'Date' ? 'date' : 'text';
    Array.prototype.forEach.call(document.querySelectorAll('.list-only'), function (n) { n.hidden = !list; });
  }

  function onCreateVariable(ev) {
    ev.preventDefault();
    setError('variable-error', null);
    var name = $('var-name').value.trim();
    if (!name) { $('variable-error').textContent = 'Give the variable a name.'; $('var-name').focus(); return; }
    var type = $('var-type').value;
    var body = { name: name, type: type };
    var code = $('var-code').value.trim();
    if (code) { body.code_name = code; }
    if (type === 'List') {
      body.values = $('var-values').value.split(',').map(function (s) { return s.trim(); }).filter(Boolean);
      body.is_multi = $('var-multi').checked;
    }
    var def = wireValue($('var-default').value, body);
    if (def !== undefined) { body.default_value = def; }
    var button = $('var-create');
    busy(button, true);
    api('POST', '/insight_variables/', body).then(function (v) {
      ['var-name', 'var-code', 'var-default', 'var-values'].forEach(function (id) { $(id).value = ''; });
      $('var-multi').checked = false;
      return loadVariables().then(function () {
        setStatus('Variable \'' + v.code_name + '\' created.');
        var input = $('test-' + v.code_name);
        (input || $('var-name')).focus();
      });
    }, function (err) {
      setError('variable-error', err);
      $('var-name').focus();
    }).then(function () { busy(button, false); });
  }

  // ------------------------------------------------------------------
  // The query and its run.

  // currentQuery is the query of the editor in the API's shape, with the
  // test values of its variables.
  function currentQuery() {
    var text = queryText();
    if (state.kind === SQL) {
      var vars = {};
      attachedVariables().forEach(function (v) {
        var ref = { variableId: v.id, code_name: v.code_name };
        var value = wireValue(state.testValues[testKey(v)], v);
        if (value !== undefined) { ref.value = value; }
        vars[v.id] = ref;
      });
      return { kind: SQL, query: text, variables: vars };
    }
    var q;
    try { q = JSON.parse(text); } catch (e) {
      throw new Error('The ' + state.kind + ' is not valid JSON: ' + e.message);
    }
    if (!q || typeof q !== 'object' || Array.isArray(q)) {
      throw new Error('The ' + state.kind + ' must be a JSON object.');
    }
    if (q.kind === undefined) { q.kind = state.kind; }
    return q;
  }

  function insightTestValues() {
    var out = {};
    var any = false;
    Object.keys(state.testValues).forEach(function (k) {
      if (k.indexOf('insight:') === 0 && state.testValues[k] !== '') {
        var name = k.slice(8);
        if (insightVariables(safeJSON(queryText())).indexOf(name) >= 0) { out[name] = state.testValues[k]; any = true; }
      }
    });
    return any ? out : undefined;
  }
  function safeJSON(text) { try { return JSON.parse(text); } catch (e) { return null; } }

  function setStatus(text) { $('status').textContent = text; }

  function clearRunErrors() {
    setError('run-error', null);
    state.valueErrors = {};
  }

  function runQuery() {
    var button = $('run');
    if (button.disabled) { return; }
    clearRunErrors();
    renderVariables(); // the placeholders of the text as it is now
    var body;
    try {
      body = { query: currentQuery() };
      if (state.kind !== SQL) {
        var vals = insightTestValues();
        if (vals) { body.variables = vals; }
      }
    } catch (e) {
      selectTab('tab-results', true);
      setError('run-error', e);
      renderVariables();
      return;
    }
    selectTab('tab-results', true);
    $('results-empty').hidden = true;
    setStatus('Running…');
    busy(button, true);
    var started = performance.now();
    api('POST', '/query/', body).then(function (res) {
      var ms = Math.round(performance.now() - started);
      renderVariables();
      renderVerdict(res.materialization);
      var n = renderResult(res, $('results'), $('chart'));
      setStatus(n + (res.hasMore ? ' (more exist past the limit of ' + res.limit + ')' : '') + ' · ' + ms + ' ms');
    }, function (err) {
      setStatus('');
      $('verdict').hidden = true;
      clear($('results'));
      clear($('chart'));
      showRunError(err);
    }).then(function () { busy(button, false); });
  }

  // showRunError shows a failed run in the results, and beside the test
  // value it concerns when the API names one (attr
  // query.variables.<id>.value).
  function showRunError(err) {
    setError('run-error', err);
    markQueryError(err, 'run');
    var m = /^query\.variables\.([^.]+)\.value$/.exec(err.attr || '');
    if (m && variableByID(m[1])) {
      var v = variableByID(m[1]);
      state.valueErrors[testKey(v)] = err.detail;
      var go = el('button', { type: 'button', id: 'go-to-variable', text: 'Go to ' + v.code_name });
      go.addEventListener('click', function () {
        selectTab('tab-variables');
        var input = $('test-' + v.code_name);
        if (input) { input.focus(); }
      });
      $('run-error').appendChild(document.createTextNode(' '));
      $('run-error').appendChild(go);
    }
    renderVariables();
  }

  function renderVerdict(m) {
    var box = $('verdict');
    clear(box);
    if (!m) { box.hidden = true; return; }
    box.hidden = false;
    box.className = m.can_materialize ? 'yes' : 'no';
    if (m.can_materialize) {
      box.appendChild(el('p', { text: 'Materializable: yes. Saved as an endpoint, this query can be pre-computed.' }));
      if (m.variables && m.variables.length) {
        var how = el('ul');
        m.variables.forEach(function (v) { how.appendChild(el('li', { text: variableVerdict(v) })); });
        box.appendChild(how);
      }
      return;
    }
    box.appendChild(el('p', { text: 'Materializable: no. Saved as an endpoint, it will always run inline, because:' }));
    var ul = el('ul');
    (m.reasons && m.reasons.length ? m.reasons : [{ message: m.reason }]).forEach(function (r) {
      ul.appendChild(el('li', { text: r.message }));
    });
    box.appendChild(ul);
  }

  // variableVerdict says how the stored table answers one variable.
  function variableVerdict(v) {
    var on = v.expression ? ' ' + v.expression : '';
    if (v.as === 'list') { return v.code_name + ': list, matched against the stored' + on; }
    if (v.as === 'range') { return v.code_name + ': range over the stored' + on + (v.bucket ? ', by ' + v.bucket : ''); }
    return v.code_name + ': key, the stored' + on;
  }

  // renderResult draws an answer (of a query or of an endpoint run) into
  // table and chart, and returns a summary of what it drew.
  function renderResult(res, table, chart) {
    clear(table);
    clear(chart);
    var results = res.results || [];
    var isSeries = results.length > 0 && results[0] && Array.isArray(results[0].data);
    var isCohorts = results.length > 0 && results[0] && Array.isArray(results[0].values);
    if (res.kind === 'LifecycleQuery' || (isSeries && results[0].status)) {
      drawChart(chart, results);
      table.appendChild(makeTable(['Status', 'Total'], results.map(function (s) { return [s.status, s.count]; }), ['', 'Number']));
      return results.length + ' statuses';
    }
    if (res.kind === 'TrendsQuery' || isSeries) {
      drawChart(chart, results);
      table.appendChild(makeTable(['Series', 'Total'], results.map(function (s) { return [s.label, s.count]; }), ['', 'Number']));
      return results.length + ' series';
    }
    if (res.kind === 'RetentionQuery' || isCohorts) {
      var width = results.reduce(function (w, c) { return Math.max(w, c.values.length); }, 0);
      var head = ['Cohort', 'Date'];
      for (var i = 0; i < width; i++) { head.push(i === 0 ? 'Size' : 'Period ' + i); }
      table.appendChild(makeTable(head, results.map(function (c) {
        return [c.label, c.date.slice(0, 10)].concat(c.values.map(function (v) { return v.count; }));
      }), head.map(function (h, j) { return j < 2 ? '' : 'Number'; })));
      return results.length + ' cohorts';
    }
    if (results.length === 0) {
      table.appendChild(el('p', { className: 'hint', text: 'No rows.' }));
    } else {
      table.appendChild(makeTable(res.columns || [], results, res.types || []));
    }
    return results.length + (results.length === 1 ? ' row' : ' rows');
  }

  function makeTable(columns, rows, types) {
    var t = el('table', { className: 'results' });
    var tr = el('tr');
    columns.forEach(function (c, i) {
      var th = el('th', { scope: 'col', text: c });
      if (types[i]) { th.setAttribute('title', types[i]); }
      tr.appendChild(th);
    });
    t.appendChild(el('thead', null, [tr]));
    var tb = el('tbody');
    rows.forEach(function (row) {
      var r = el('tr');
      row.forEach(function (v, i) {
        var f = formatCell(v, types[i]);
        var td = el('td', { text: f.text });
        if (f.num) { td.className = 'num'; }
        if (f.full !== f.text) { td.setAttribute('title', f.full); }
        if (v === null || v === undefined) { td.className = 'null'; }
        r.appendChild(td);
      });
      tb.appendChild(r);
    });
    t.appendChild(tb);
    return t;
  }

  // numericType tells the kind of number a column's engine type holds:
  // 'float' (REAL, Float64, double precision, numeric, decimal), 'int'
  // (INTEGER, UInt64, bigint, ...) or '' for any other type.
  function numericType(type) {
    var t = String(type || '').toLowerCase();
    if (/float|double|real|decimal|numeric/.test(t)) { return 'float'; }
    if (/int|serial|count/.test(t) && !/interval|point/.test(t)) { return 'int'; }
    return '';
  }

  // formatCell is the text of one cell: numbers as their column's type
  // reads (a float to 2 decimals, or 3 significant digits under 1; a
  // decimal the database sends as text likewise), the rest as it came.
  // full is the value unrounded, shown on hover when it differs.
  function formatCell(v, type) {
    var kind = numericType(type);
    var n = v;
    if (typeof v === 'string' && kind !== '' && v.trim() !== '' && isFinite(Number(v))) { n = Number(v); }
    if (typeof n !== 'number' || !isFinite(n)) { return { text: display(v), full: display(v), num: typeof v === 'number' }; }
    var full = display(v);
    if (Number.isInteger(n) && kind !== 'float') { return { text: full, full: full, num: true }; }
    var text = Math.abs(n) >= 1 || n === 0
      ? n.toLocaleString('en-US', { useGrouping: false, minimumFractionDigits: kind === 'float' || !Number.isInteger(n) ? 2 : 0, maximumFractionDigits: 2 })
      : n.toLocaleString('en-US', { useGrouping: false, maximumSignificantDigits: 3 });
    return { text: text, full: full, num: true };
  }

  // drawChart draws trends series as lines in an inline SVG.
  var palette = ['#1f5fd1', '#d1581f', '#1b7a3a', '#9c27b0', '#c62828', '#00838f', '#6d4c41', '#5c6bc0', '#ef6c00', '#2e7d32', '#ad1457', '#455a64'];
  function drawChart(container, series) {
    var NS = 'http://www.w3.org/2000/svg';
    var svgEl = function (tag, attrs) {
      var e = document.createElementNS(NS, tag);
      Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      return e;
    };
    var shown = series.slice(0, MAX_SERIES);
    var points = shown.reduce(function (n, s) { return Math.max(n, s.data.length); }, 0);
    var W = 720, H = 280, L = 52, R = 16, T = 14, B = 34;
    var max = 0;
    shown.forEach(function (s) { s.data.forEach(function (v) { if (v > max) { max = v; } }); });
    max = niceMax(max);
    var labels = (shown[0] && (shown[0].labels || shown[0].days)) || [];
    var svg = svgEl('svg', {
      viewBox: '0 0 ' + W + ' ' + H, 'class': 'chart', role: 'img',
      'aria-label': 'Line chart of ' + shown.length + ' series over ' + points + ' intervals' + (labels.length ? ', ' + labels[0] + ' to ' + labels[labels.length - 1] : '')
    });
    var x = function (i) { return L + (points <= 1 ? (W - L - R) / 2 : i * (W - L - R) / (points - 1)); };
    var y = function (v) { return T + (H - T - B) * (1 - v / max); };
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      var v = max * f;
      svg.appendChild(svgEl('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), 'class': f === 0 ? 'axis' : 'grid-line' }));
      var t = svgEl('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' });
      t.textContent = formatNumber(v);
      svg.appendChild(t);
    });
    svg.appendChild(svgEl('line', { x1: L, x2: L, y1: T, y2: H - B, 'class': 'axis' }));
    var ticks = points <= 1 ? [0] : [0, Math.floor((points - 1) / 2), points - 1];
    ticks.forEach(function (i, k) {
      if (labels[i] === undefined) { return; }
      var t = svgEl('text', { x: x(i), y: H - B + 16, 'text-anchor': k === 0 && points > 1 ? 'start' : (k === ticks.length - 1 && points > 1 ? 'end' : 'middle') });
      t.textContent = labels[i];
      svg.appendChild(t);
    });
    shown.forEach(function (s, k) {
      var pts = s.data.map(function (v, i) { return x(i).toFixed(1) + ',' + y(v).toFixed(1); }).join(' ');
      var line = svgEl('polyline', { points: pts, stroke: palette[k % palette.length], 'data-label': s.label });
      var title = svgEl('title');
      title.textContent = s.label + ': ' + formatNumber(s.count) + ' in all';
      line.appendChild(title);
      svg.appendChild(line);
    });
    container.appendChild(svg);
    var legend = el('ul', { className: 'legend', 'aria-label': 'Series' });
    shown.forEach(function (s, k) {
      var sw = el('span', { className: 'swatch', 'aria-hidden': 'true' });
      sw.style.background = palette[k % palette.length];
      legend.appendChild(el('li', null, [sw, s.label]));
    });
    container.appendChild(legend);
    if (series.length > shown.length) {
      container.appendChild(el('p', { className: 'hint', text: 'The chart shows the first ' + shown.length + ' of ' + series.length + ' series; the table lists them all.' }));
    }
  }
  function niceMax(v) {
    if (v <= 0) { return 1; }
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) { if (steps[i] * p >= v) { return steps[i] * p; } }
    return 10 * p;
  }
  function formatNumber(v) {
    return Math.abs(v) >= 1000 ? v.toLocaleString('en-US', { maximumFractionDigits: 0 }) : String(Math.round(v * 100) / 100);
  }

  // ------------------------------------------------------------------
  // Save as endpoint.

  function openSave() {
    clearSaved();
    $('save-form').hidden = false;
    setError('save-error', null);
    var ed = state.editing;
    $('save-name').readOnly = !!ed;
    if (ed) {
      $('save-name').value = ed.name;
      $('save-description').value = ed.description || '';
      $('save-h').textContent = 'Save as version ' + (ed.current_version + 1) + ' of ' + ed.name;
      $('save-confirm').textContent = 'Save version ' + (ed.current_version + 1);
      $('save-description').focus();
    } else {
      $('save-h').textContent = 'Save as endpoint';
      $('save-confirm').textContent = 'Save endpoint';
      $('save-name').focus();
    }
  }
  // clearSaved hides the curl box of the last save: it runs another query
  // than the one the editor now holds.
  function clearSaved() {
    $('saved').hidden = true;
    $('saved-message').textContent = '';
    $('saved-curl').value = '';
  }
  // fitCurl sizes the curl box to its text, so that no line is cut.
  function fitCurl() {
    var ta = $('saved-curl');
    if ($('saved').hidden) { return; }
    ta.style.height = 'auto';
    ta.style.height = (ta.scrollHeight + 2) + 'px';
  }
  function closeSave() {
    $('save-form').hidden = true;
    $('open-save').focus();
  }

  function onSave(ev) {
    ev.preventDefault();
    setError('save-error', null);
    var name = $('save-name').value.trim();
    if (!name) { $('save-error').textContent = 'Give the endpoint a name.'; $('save-name').focus(); return; }
    renderVariables();
    var body = { name: name, query: null };
    var description = $('save-description').value.trim();
    if (description) { body.description = description; }
    try { body.query = currentQuery(); } catch (e) { setError('save-error', e); return; }
    var button = $('save-confirm');
    busy(button, true);
    var ed = state.editing;
    var call;
    if (ed) {
      // A new version of the endpoint being edited: PATCH its query (and
      // description), as the API makes versions.
      var patch = { query: body.query };
      if ((ed.description || '') !== description) { patch.description = description; }
      call = api('PATCH', '/endpoints/' + encodeURIComponent(ed.name), patch);
    } else {
      call = api('POST', '/endpoints/', body);
    }
    call.then(function (ep) {
      if (ed) { state.editing = ep; showEditing(); }
      $('save-form').hidden = true;
      $('save-name').value = '';
      $('save-description').value = '';
      $('saved').hidden = false;
      $('saved-message').textContent = 'Saved endpoint \'' + ep.name + '\', version ' + ep.current_version + '.';
      $('saved-curl').value = curlFor(ep);
      fitCurl();
      $('saved').focus();
      return loadEndpoints();
    }, function (err) {
      setError('save-error', err);
      if (err.where && state.kind === SQL) {
        // The save-time check's error, marked where it is in the query.
        markQueryError(err, 'save');
        code.revealError();
        return;
      }
      $('save-name').focus();
    }).then(function () { busy(button, false); });
  }

  // curlFor is the command that runs ep with the editor's test values (or
  // the defaults), the key left in an environment variable so that it is
  // never shown on screen.
  function curlFor(ep) {
    var vars = {};
    if (state.kind === SQL) {
      attachedVariables().forEach(function (v) {
        var value = wireValue(state.testValues[testKey(v)], v);
        if (value === undefined) { value = v.default_value === null || v.default_value === undefined ? '' : v.default_value; }
        vars[v.code_name] = value;
      });
    } else {
      vars = insightTestValues() || {};
    }
    var url = new URL(ep.endpoint_path, apiOrigin()).href;
    return 'curl -X POST ' + shellQuote(url) + ' \\\n' +
      '  -H "Authorization: Bearer $ENDPOINTKIT_API_KEY" \\\n' +
      '  -H \'Content-Type: application/json\' \\\n' +
      '  -d ' + shellQuote(JSON.stringify({ variables: vars }));
  }

  // ------------------------------------------------------------------
  // Saved endpoints.

  function loadEndpoints() {
    setError('endpoints-error', null);
    return api('GET', '/endpoints/').then(function (body) {
      state.endpoints = (body && body.results) || [];
      renderEndpoints();
    }, function (err) { setError('endpoints-error', err); });
  }

  // duration says a number of seconds in words.
  function duration(sec) {
    if (typeof sec !== 'number') { return '—'; }
    var units = [[86400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']];
    for (var i = 0; i < units.length; i++) {
      if (sec >= units[i][0] && sec % units[i][0] === 0) {
        var n = sec / units[i][0];
        return n + ' ' + units[i][1] + (n === 1 ? '' : 's');
      }
    }
    return sec + ' s';
  }
  function kindName(q) {
    var k = q && q.kind;
    return { HogQLQuery: 'SQL', TrendsQuery: 'Trends', RetentionQuery: 'Retention', LifecycleQuery: 'Lifecycle' }[k] || String(k || '?');
  }
  function when(t) { return t ? String(t).slice(0, 19).replace('T', ' ') + ' UTC' : ''; }

  // materializedText says whether ep is materialized, in what state, and
  // since when; or why it cannot be.
  function materializedText(ep) {
    var m = ep.materialization || {};
    if (ep.is_materialized) {
      var t = 'yes';
      if (m.status) { t += ' · ' + m.status; }
      if (m.last_materialized_at) { t += ' · ' + when(m.last_materialized_at); }
      if (m.error) { t += ' · ' + m.error; }
      return t;
    }
    if (!m.can_materialize) { return 'no (cannot: ' + (m.reason || 'not materializable') + ')'; }
    return 'no';
  }

  // placeRunForm puts the run form in a row of its own right under the
  // row of the endpoint it runs (on a narrow screen, under its card), or
  // back in its section, hidden, when there is no such row.
  function placeRunForm() {
    var form = $('run-form');
    var ep = state.runTarget;
    var row = null;
    Array.prototype.forEach.call($('endpoints').querySelectorAll('tbody tr[data-endpoint]'), function (tr) {
      if (ep && tr.getAttribute('data-endpoint') === ep.name) { row = tr; }
    });
    var old = $('run-row');
    if (!row) {
      $('endpoints').parentNode.appendChild(form);
      form.hidden = true;
      if (old) { old.parentNode.removeChild(old); }
      if (ep) { state.runTarget = null; }
      return;
    }
    var holder = old || el('tr', { id: 'run-row', className: 'run-row' }, [el('td', { colspan: '6' })]);
    holder.setAttribute('data-run-for', ep.name);
    holder.firstChild.appendChild(form);
    row.parentNode.insertBefore(holder, row.nextSibling);
    row.classList.add('running');
    form.hidden = false;
  }

  // rowActions are the attributes that name a row button's action.
  var rowActions = ['data-run', 'data-edit', 'data-materialize', 'data-delete'];

  // focusedRowAction tells which row button of tbody has the keyboard's
  // focus, as its action and endpoint; null when none has.
  function focusedRowAction(tbody) {
    var f = document.activeElement;
    if (!f || f.tagName !== 'BUTTON' || !tbody.contains(f)) { return null; }
    for (var i = 0; i < rowActions.length; i++) {
      if (f.hasAttribute(rowActions[i])) { return { attr: rowActions[i], name: f.getAttribute(rowActions[i]) }; }
    }
    return null;
  }

  function renderEndpoints() {
    var tbody = $('endpoints').querySelector('tbody');
    // The list is drawn anew when a refresh or a finished materialization
    // reloads it: the row button that had the keyboard's focus gets it
    // back, so that a key pressed there is not lost to the page's body.
    var focused = focusedRowAction(tbody);
    // The run form outlives the list drawn anew: kept aside, then put back
    // under its endpoint's new row. Moving it takes the focus from the
    // field being typed in, which gets it back too.
    var form = $('run-form');
    var typing = form.contains(document.activeElement) ? document.activeElement : null;
    $('endpoints').parentNode.appendChild(form);
    clear(tbody);
    state.endpoints.forEach(function (ep) {
      var tr = el('tr', { 'data-endpoint': ep.name });
      var nameCell = el('td', { 'data-label': 'Name' }, [el('code', { text: ep.name })]);
      if (ep.description) { nameCell.appendChild(el('div', { className: 'hint', text: ep.description })); }
      tr.appendChild(nameCell);
      tr.appendChild(el('td', { 'data-label': 'Kind', 'data-col': 'kind', text: kindName(ep.query) }));
      tr.appendChild(el('td', { 'data-label': 'Version', text: 'v' + ep.current_version + ' (' + ep.versions_count + (ep.versions_count === 1 ? ' version)' : ' versions)') }));
      tr.appendChild(el('td', { 'data-label': 'Materialized', 'data-col': 'materialized', text: materializedText(ep) }));
      var fresh = 'answers cached ' + duration(ep.data_freshness_seconds);
      if (ep.is_materialized) { fresh += '; stored table refreshed every ' + duration(ep.materialization_freshness); }
      tr.appendChild(el('td', { 'data-label': 'Freshness', 'data-col': 'freshness', text: fresh }));
      var actions = el('td', { className: 'row-actions' });
      var button = function (text, label, attr, fn) {
        var b = el('button', { type: 'button', text: text, 'aria-label': label + ' ' + ep.name });
        b.setAttribute(attr, ep.name);
        b.addEventListener('click', fn);
        actions.appendChild(b);
        return b;
      };
      button('Run…', 'Run endpoint', 'data-run', function () { openRun(ep); });
      button('Edit', 'Edit endpoint', 'data-edit', function () { editEndpoint(ep); });
      var m = ep.materialization || {};
      if (ep.is_materialized) {
        button('Stop materializing…', 'Stop materializing endpoint', 'data-materialize', function () {
          askConfirm('Stop materializing \'' + ep.name + '\'? Its runs will compute their answer from the events again, and its stored table is dropped.',
            'Stop materializing', function () { return setMaterialized(ep, false); });
        });
      } else {
        var mb = button('Materialize…', 'Materialize endpoint', 'data-materialize', function () {
          askConfirm('Materialize \'' + ep.name + '\'? Its answer is computed now and stored, then refreshed every ' + duration(ep.materialization_freshness) + '; runs read the stored table.',
            'Materialize', function () { return setMaterialized(ep, true); });
        });
        if (!m.can_materialize) { mb.disabled = true; mb.title = m.reason || ''; }
      }
      button('Delete…', 'Delete endpoint', 'data-delete', function () {
        askConfirm('Delete \'' + ep.name + '\' and its ' + ep.versions_count + (ep.versions_count === 1 ? ' version' : ' versions') + '? Its URL stops answering; this cannot be undone.',
          'Delete endpoint', function () { return deleteEndpoint(ep); });
      });
      tr.appendChild(actions);
      tbody.appendChild(tr);
    });
    $('endpoints').hidden = state.endpoints.length === 0;
    $('no-endpoints').hidden = state.endpoints.length > 0;
    if (focused) {
      Array.prototype.forEach.call(tbody.querySelectorAll('button[' + focused.attr + ']'), function (b) {
        if (b.getAttribute(focused.attr) === focused.name) { b.focus(); }
      });
    }
    if (state.runTarget) {
      var fresh = state.endpoints.filter(function (e) { return e.name === state.runTarget.name; })[0];
      if (fresh) { state.runTarget = fresh; }
      placeRunForm();
    }
    if (typing && !form.hidden && document.activeElement !== typing) { typing.focus(); }
  }

  // askConfirm asks before an action that changes or removes an endpoint.
  function askConfirm(text, yes, action) {
    state.confirmAction = action;
    $('confirm-text').textContent = text;
    $('confirm-yes').textContent = yes;
    $('confirm').hidden = false;
    $('confirm-no').focus();
  }
  function closeConfirm() {
    state.confirmAction = null;
    $('confirm').hidden = true;
  }
  function onConfirm() {
    var action = state.confirmAction;
    if (!action) { return; }
    var button = $('confirm-yes');
    busy(button, true);
    setError('endpoints-error', null);
    action().then(function (message) {
      closeConfirm();
      $('endpoint-status').textContent = message;
      return loadEndpoints();
    }, function (err) {
      closeConfirm();
      setError('endpoints-error', err);
    }).then(function () { busy(button, false); $('refresh-endpoints').focus(); });
  }

  function setMaterialized(ep, on) {
    return api('PATCH', '/endpoints/' + encodeURIComponent(ep.name), { is_materialized: on }).then(function () {
      if (state.runTarget && state.runTarget.name === ep.name) { closeRun(); }
      if (on) { watchMaterialization(ep.name); } else { stopWatching(ep.name); }
      return on ? 'Endpoint \'' + ep.name + '\' is materialized.' : 'Endpoint \'' + ep.name + '\' is no longer materialized.';
    });
  }

  // materializePollMS is how often the materialization status is read
  // while a refresh runs; materializeMaxPolls bounds how long a refresh
  // that has not started (pending) is waited for.
  var materializePollMS = 400;
  var materializeMaxPolls = 300;

  // watchMaterialization follows the refresh of the endpoint named name
  // (GET .../materialization_status) while it runs, showing its phase,
  // rows and bytes written so far and its elapsed time, then its result:
  // the rows stored and how long it took, or its error, and the warning
  // when materializing it saves little (savings_warning).
  function watchMaterialization(name) {
    var token = { name: name };
    state.watching = token;
    var box = $('materialize-progress'), warn = $('savings-warning');
    box.hidden = false;
    box.setAttribute('data-state', 'running');
    box.setAttribute('data-phase', 'starting');
    box.textContent = 'Materializing \'' + name + '\': starting…';
    warn.hidden = true;
    warn.textContent = '';
    var polls = 0;
    function poll() {
      if (state.watching !== token) { return; }
      api('GET', '/endpoints/' + encodeURIComponent(name) + '/materialization_status').then(function (st) {
        if (state.watching !== token) { return; }
        polls++;
        var running = st.progress || st.status === 'running' || st.status === 'pending';
        if (st.is_materialized && running && polls < materializeMaxPolls) {
          box.setAttribute('data-phase', st.progress ? st.progress.phase : st.status);
          box.textContent = progressText(name, st);
          setTimeout(poll, materializePollMS);
          return;
        }
        showMaterialized(name, st);
        state.watching = null;
        loadEndpoints();
      }, function (err) {
        if (state.watching !== token) { return; }
        state.watching = null;
        box.setAttribute('data-state', 'error');
        box.textContent = 'Could not read the materialization status of \'' + name + '\': ' + err.detail;
      });
    }
    poll();
  }

  // stopWatching stops following name's refresh and clears what it showed.
  function stopWatching(name) {
    if (state.watching && state.watching.name !== name) { return; }
    state.watching = null;
    $('materialize-progress').hidden = true;
    $('savings-warning').hidden = true;
  }

  // progressText is the line of a refresh under way: its phase, rows and
  // bytes written so far (when the engine can say) and its elapsed time.
  function progressText(name, st) {
    var p = st.progress;
    if (!p) { return 'Materializing \'' + name + '\': ' + (st.status === 'pending' ? 'waiting to start…' : 'running…'); }
    var parts = [p.phase];
    parts.push(p.rows_written === null || p.rows_written === undefined ? 'rows not known yet' : plural(p.rows_written, 'row'));
    if (p.bytes_written !== null && p.bytes_written !== undefined) { parts.push(formatBytes(p.bytes_written)); }
    parts.push(formatSeconds(p.elapsed_ms) + ' elapsed');
    return 'Materializing \'' + name + '\': ' + parts.join(' · ');
  }

  // showMaterialized shows how the refresh of name ended, and the savings
  // warning when there is one.
  function showMaterialized(name, st) {
    var box = $('materialize-progress'), warn = $('savings-warning');
    box.removeAttribute('data-phase');
    if (!st.is_materialized) {
      box.setAttribute('data-state', 'stopped');
      box.textContent = '\'' + name + '\' is no longer materialized.';
    } else if (st.status === 'failed') {
      box.setAttribute('data-state', 'failed');
      box.textContent = 'Materializing \'' + name + '\' failed: ' + (st.last_error || 'no reason given');
    } else if (st.status === 'completed') {
      box.setAttribute('data-state', 'completed');
      var parts = [st.rows === null || st.rows === undefined ? 'rows unknown' : plural(st.rows, 'row') + ' stored'];
      if (st.bytes !== null && st.bytes !== undefined) { parts.push(formatBytes(st.bytes)); }
      if (st.duration_ms !== null && st.duration_ms !== undefined) { parts.push('built in ' + formatSeconds(st.duration_ms)); }
      if (st.source_rows !== null && st.source_rows !== undefined) { parts.push('from ' + plural(st.source_rows, 'source row')); }
      box.textContent = 'Materialized \'' + name + '\': ' + parts.join(' · ');
    } else {
      box.setAttribute('data-state', 'pending');
      box.textContent = 'Materializing \'' + name + '\' has not started yet (' + st.status + '); the list shows its status.';
    }
    if (st.savings_warning) {
      warn.textContent = 'Little to save: ' + st.savings_warning;
      warn.hidden = false;
    }
  }

  function plural(n, word) { return formatNumber(n) + ' ' + word + (n === 1 ? '' : 's'); }
  function formatSeconds(ms) { return (ms / 1000).toFixed(1) + ' s'; }
  function formatBytes(b) {
    var units = ['bytes', 'kB', 'MB', 'GB', 'TB'], i = 0;
    while (b >= 1000 && i < units.length - 1) { b /= 1000; i++; }
    return (i === 0 ? String(b) : b.toFixed(1)) + ' ' + units[i];
  }

  function deleteEndpoint(ep) {
    return api('DELETE', '/endpoints/' + encodeURIComponent(ep.name)).then(function () {
      if (state.runTarget && state.runTarget.name === ep.name) { closeRun(); }
      if (state.editing && state.editing.name === ep.name) { stopEditing(); }
      return 'Endpoint \'' + ep.name + '\' deleted.';
    });
  }

  // editEndpoint loads the current query of ep into the editor; saving it
  // then makes a new version of ep.
  function editEndpoint(ep) {
    var q = ep.query || {};
    state.editing = ep;
    var kind = q.kind === SQL || samples[q.kind] !== undefined ? q.kind : SQL;
    state.texts[state.kind] = queryText();
    $('kind').value = kind;
    state.texts[kind] = kind === SQL ? (q.query || '') : JSON.stringify(q, null, 2);
    state.kind = '';
    onKind();
    showEditing();
    code.focus();
  }
  function showEditing() {
    var ed = state.editing;
    $('editing').hidden = !ed;
    $('editing-text').textContent = ed ? 'Editing \'' + ed.name + '\' (version ' + ed.current_version + '): saving makes version ' + (ed.current_version + 1) + '.' : '';
    $('open-save').textContent = ed ? 'Save as version ' + (ed.current_version + 1) + '…' : 'Save as endpoint…';
  }
  function stopEditing() {
    state.editing = null;
    $('save-form').hidden = true;
    $('save-name').readOnly = false;
    $('save-name').value = '';
    $('save-description').value = '';
    showEditing();
  }

  function closeRun() {
    state.runTarget = null;
    Array.prototype.forEach.call(document.querySelectorAll('#endpoints tr.running'), function (tr) { tr.classList.remove('running'); });
    placeRunForm();
  }

  function openRun(ep) {
    Array.prototype.forEach.call(document.querySelectorAll('#endpoints tr.running'), function (tr) { tr.classList.remove('running'); });
    state.runTarget = ep;
    state.runValues = {};
    state.runSchema = null;
    placeRunForm();
    $('run-name').textContent = ep.name;
    setError('run-endpoint-error', null);
    $('run-endpoint-status').textContent = '';
    clear($('run-endpoint-results'));
    clear($('run-endpoint-chart'));
    clear($('run-fields'));
    var select = $('run-version');
    clear(select);
    return api('GET', '/endpoints/' + encodeURIComponent(ep.name) + '/versions/').then(function (body) {
      state.versions = (body && body.results) || [];
      state.versions.slice().reverse().forEach(function (v) {
        select.appendChild(el('option', { value: String(v.version), text: 'Version ' + v.version + (v.version === ep.current_version ? ' (current)' : '') + ' · ' + (v.created_at || '').slice(0, 19).replace('T', ' ') }));
      });
      return loadRunSchema().then(function () { select.focus(); });
    }, function (err) { setError('run-endpoint-error', err); });
  }

  function selectedVersion() {
    var n = parseInt($('run-version').value, 10);
    for (var i = 0; i < state.versions.length; i++) { if (state.versions[i].version === n) { return state.versions[i]; } }
    return null;
  }

  // runFields reads the variables a run of the endpoint takes from the
  // request schema of its OpenAPI document: the server's own account of
  // what it accepts for the endpoint's current state (a materialized
  // insight endpoint takes no dates; its breakdowns are required).
  function runFields(doc) {
    var op = null;
    Object.keys((doc && doc.paths) || {}).forEach(function (p) { op = op || doc.paths[p].post; });
    var schema = op && op.requestBody && op.requestBody.content && op.requestBody.content['application/json'] &&
      op.requestBody.content['application/json'].schema;
    var vars = schema && schema.properties && schema.properties.variables;
    if (!vars) { return []; }
    var required = vars.required || [];
    return Object.keys(vars.properties || {}).map(function (name) {
      var s = vars.properties[name] || {};
      var v = { type: 'String' };
      if (s.type === 'number' || s.type === 'integer') { v.type = 'Number'; }
      else if (s.type === 'boolean') { v.type = 'Boolean'; }
      else if (s.type === 'array') { v = { type: 'List', is_multi: true, values: (s.items && s.items.enum) || [] }; }
      else if (Array.isArray(s.enum)) { v = { type: 'List', values: s.enum }; }
      else if (Array.isArray(s.anyOf) && s.anyOf.some(function (a) { return a.format === 'date'; })) { v.type = 'Date'; }
      return { name: name, v: v, required: required.indexOf(name) >= 0 };
    }).sort(function (a, b) { return a.required === b.required ? (a.name < b.name ? -1 : 1) : (a.required ? -1 : 1); });
  }

  function loadRunSchema() {
    var ep = state.runTarget;
    var version = selectedVersion();
    var path = '/endpoints/' + encodeURIComponent(ep.name) + '/openapi.json' + (version ? '?version=' + version.version : '');
    clear($('run-fields'));
    var q = version ? version.query : ep.query;
    $('run-query').querySelector('pre').textContent = q ? (q.kind === SQL ? q.query : JSON.stringify(q, null, 2)) : '';
    return api('GET', path).then(function (doc) {
      if (state.runTarget !== ep) { return; }
      state.runSchema = runFields(doc);
      renderRunFields();
    }, function (err) { setError('run-endpoint-error', err); });
  }

  // renderRunFields builds the run form's inputs, one per variable the
  // server takes for the chosen version.
  function renderRunFields() {
    var box = $('run-fields');
    clear(box);
    var fields = state.runSchema || [];
    fields.forEach(function (f, i) {
      var id = 'run-var-' + i;
      var made = valueInput(id, f.name, f.v, state.runValues, f.name);
      made.label.className = '';
      made.label.textContent = f.name + ' (' + f.v.type + (f.v.is_multi ? ', several' : '') + (f.required ? ', required' : ', optional') + ')';
      made.input.setAttribute('data-variable', f.name);
      if (f.required) { made.input.setAttribute('aria-required', 'true'); }
      box.appendChild(el('div', { className: 'field' }, [made.label, made.input]));
    });
    if (fields.length === 0) { box.appendChild(el('p', { className: 'hint', text: 'This version takes no variables.' })); }
  }

  function onRunEndpoint(ev) {
    ev.preventDefault();
    var ep = state.runTarget;
    if (!ep) { return; }
    setError('run-endpoint-error', null);
    var vars = {};
    var version = selectedVersion();
    var byName = {};
    (state.runSchema || []).forEach(function (f) { byName[f.name] = f.v; });
    Array.prototype.forEach.call($('run-fields').querySelectorAll('[data-variable]'), function (input) {
      var name = input.getAttribute('data-variable');
      var value = wireValue(input.value, byName[name]);
      if (value !== undefined) { vars[name] = value; }
    });
    var body = { variables: vars };
    if (version && version.version !== ep.current_version) { body.version = version.version; }
    var button = $('run-endpoint');
    busy(button, true);
    $('run-endpoint-status').textContent = 'Running…';
    var started = performance.now();
    api('POST', '/endpoints/' + encodeURIComponent(ep.name) + '/run', body).then(function (res) {
      var n = renderResult(res, $('run-endpoint-results'), $('run-endpoint-chart'));
      var served = servedBy(res, ep);
      var status = $('run-endpoint-status');
      status.setAttribute('data-served', served.by);
      status.textContent = n + ' from version ' + res.endpoint_version + (res.hasMore ? ' (more exist)' : '') + ' · ' + served.text +
        (res.is_cached ? ' · from the result cache' : '') + ' · ' + Math.round(performance.now() - started) + ' ms';
    }, function (err) {
      $('run-endpoint-status').textContent = '';
      clear($('run-endpoint-results'));
      clear($('run-endpoint-chart'));
      setError('run-endpoint-error', err);
    }).then(function () { busy(button, false); });
  }

  // servedBy says what answered a run of a saved endpoint: its stored
  // table (and the data's time), or the source data inline, with the
  // server's reason when the endpoint is materialized (inline_reason).
  function servedBy(res, ep) {
    if (res.endpoint_materialized) {
      return { by: 'table', text: 'the stored table answered' + (res.endpoint_materialized_at ? ' (data of ' + when(res.endpoint_materialized_at) + ')' : '') };
    }
    if (res.inline_reason) {
      return { by: 'inline', text: 'ran inline, not from the stored table: ' + res.inline_reason };
    }
    if (ep && ep.is_materialized) {
      // A cached answer of a materialized endpoint's inline run: the
      // server keeps no reason with it.
      return { by: 'inline', text: 'ran inline, not from the stored table' + (res.is_cached ? ' (a cached answer: the server kept no reason)' : '') };
    }
    return { by: 'inline', text: 'ran inline (the endpoint is not materialized)' };
  }

  // ------------------------------------------------------------------
  // The schema: the tables and columns the project may read.

  function loadSchema() {
    setError('schema-error', null);
    return api('GET', '/schema/').then(function (body) {
      var box = $('schema');
      clear(box);
      var tables = (body && body.results) || [];
      code.setSchema(tables);
      if (tables.length === 0) { box.appendChild(el('p', { className: 'hint', text: 'No table is readable by this project.' })); }
      tables.forEach(function (t) {
        var rows = el('tbody');
        (t.columns || []).forEach(function (c) {
          rows.appendChild(el('tr', { 'data-column': c.name }, [el('td', null, [el('code', { text: c.name })]), el('td', { className: 'mono', text: c.type || '' })]));
        });
        var table = el('table', { className: 'schema-table', 'data-table': t.name }, [
          el('caption', null, [el('code', { text: t.name })]),
          el('thead', null, [el('tr', null, [el('th', { scope: 'col', text: 'Column' }), el('th', { scope: 'col', text: 'Type' })])]),
          rows
        ]);
        box.appendChild(table);
      });
    }, function (err) { setError('schema-error', err); });
  }

  // ------------------------------------------------------------------
  // Tabs (WAI-ARIA tabs: arrows, Home and End move between them).

  function selectTab(id, keepFocus) {
    Array.prototype.forEach.call(document.querySelectorAll('[role=tab]'), function (tab) {
      var on = tab.id === id;
      tab.setAttribute('aria-selected', on ? 'true' : 'false');
      tab.tabIndex = on ? 0 : -1;
      $(tab.getAttribute('aria-controls')).hidden = !on;
      if (on && !keepFocus && document.activeElement && document.activeElement.getAttribute('role') === 'tab') { tab.focus(); }
    });
  }

  function onTabKey(ev) {
    var tabs = Array.prototype.slice.call(document.querySelectorAll('[role=tab]'));
    var i = tabs.indexOf(document.activeElement);
    if (i < 0) { return; }
    var next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[ev.key];
    if (next === undefined) { return; }
    ev.preventDefault();
    next = (next + tabs.length) % tabs.length;
    tabs[next].focus();
    selectTab(tabs[next].id);
  }

  // ------------------------------------------------------------------
  // Wiring.

  function onKind() {
    if (state.kind) { state.texts[state.kind] = queryText(); }
    state.kind = $('kind').value;
    setQueryText(state.texts[state.kind] || '');
    var sql = state.kind === SQL;
    $('sql-label').textContent = sql ? 'SQL' : state.kind + ' JSON';
    // SQL-only help: placeholders and project variables are not part of an
    // insight query.
    $('sql-hint').hidden = !sql;
    $('variable-form').hidden = !sql;
    $('insight-form').hidden = sql;
    $('variables-h').textContent = sql ? 'Placeholders in the query' : 'Run-time variables of the insight';
    $('sql-dialect').textContent = sql ? '(' + (DIALECT_NAMES[code.dialectName()] || code.dialectName()) + ')' : '';
    code.setMode(sql ? 'sql' : 'json', sql ? SQL_PLACEHOLDER : '', $('sql-label').textContent);
    code.markError(null);
    // The rows and the verdict of another kind's query no longer stand.
    clearResults();
    clearSaved();
    if (!sql) { formFromJSON(); }
    renderVariables();
  }

  // clearResults empties the Results panel back to its hint.
  function clearResults() {
    setStatus('');
    setError('run-error', null);
    clear($('verdict'));
    $('verdict').hidden = true;
    clear($('results'));
    clear($('chart'));
    $('results-empty').hidden = false;
  }

  var renderTimer = 0;
  function onSQLInput() {
    clearTimeout(renderTimer);
    renderTimer = setTimeout(function () {
      renderVariables();
      if (state.kind !== SQL) { formFromJSON(); }
    }, 120);
  }

  // ------------------------------------------------------------------
  // The insight form: it writes the query's JSON (the same the API takes),
  // which stays editable; edits of the JSON are shown in the form where it
  // can show them, and what it cannot show is left as written.

  var MATHS = [['total', 'Total count'], ['dau', 'Unique users'], ['sum', 'Sum of property'], ['avg', 'Average of property'], ['min', 'Minimum of property'], ['max', 'Maximum of property']];
  var OPERATORS = [['exact', '='], ['is_not', '≠'], ['icontains', 'contains'], ['not_icontains', 'does not contain'], ['gt', '>'], ['lt', '<'], ['is_set', 'is set'], ['is_not_set', 'is not set']];
  var needsProperty = function (m) { return m === 'sum' || m === 'avg' || m === 'min' || m === 'max'; };
  var takesValue = function (op) { return op !== 'is_set' && op !== 'is_not_set'; };

  function options(pairs, selected) {
    return pairs.map(function (p) {
      var o = el('option', { value: p[0], text: p[1] });
      if (p[0] === selected) { o.selected = true; }
      return o;
    });
  }

  function seriesRow(i, s, lifecycle) {
    var row = el('div', { className: 'if-row', 'data-series': String(i) });
    var ev = el('input', { id: 'if-event-' + i, type: 'text', spellcheck: 'false', list: 'if-events', 'data-f': 'event', placeholder: 'all events' });
    ev.value = s.event || '';
    row.appendChild(el('div', { className: 'field' }, [el('label', { 'for': ev.id, text: 'Series ' + (i + 1) + ' event' }), ev]));
    if (!lifecycle) {
      var math = el('select', { id: 'if-math-' + i, 'data-f': 'math' }, options(MATHS, s.math || 'total'));
      row.appendChild(el('div', { className: 'field' }, [el('label', { 'for': math.id, text: 'Math' }), math]));
      var mp = el('input', { id: 'if-math-property-' + i, type: 'text', spellcheck: 'false', 'data-f': 'math_property', placeholder: 'amount' });
      mp.value = s.math_property || '';
      var mpf = el('div', { className: 'field' }, [el('label', { 'for': mp.id, text: 'Of property' }), mp]);
      mpf.hidden = !needsProperty(s.math || 'total');
      row.appendChild(mpf);
      var rm = el('button', { type: 'button', className: 'remove', text: 'Remove', 'aria-label': 'Remove series ' + (i + 1) });
      rm.addEventListener('click', function () { removeRow('#if-series', i); });
      row.appendChild(rm);
    }
    return row;
  }

  function filterRow(i, f) {
    var row = el('div', { className: 'if-row', 'data-filter': String(i) });
    var key = el('input', { id: 'if-key-' + i, type: 'text', spellcheck: 'false', 'data-f': 'key', placeholder: 'country' });
    key.value = f.key || '';
    var op = el('select', { id: 'if-op-' + i, 'data-f': 'operator' }, options(OPERATORS, f.operator || 'exact'));
    var val = el('input', { id: 'if-value-' + i, type: 'text', spellcheck: 'false', 'data-f': 'value', placeholder: 'US, DE' });
    val.value = f.value === undefined || f.value === null ? '' : (Array.isArray(f.value) ? f.value.join(', ') : String(f.value));
    var valField = el('div', { className: 'field' }, [el('label', { 'for': val.id, text: 'Value(s)' }), val]);
    valField.hidden = !takesValue(f.operator || 'exact');
    var rm = el('button', { type: 'button', className: 'remove', text: 'Remove', 'aria-label': 'Remove filter ' + (i + 1) });
    rm.addEventListener('click', function () { removeRow('#if-filters', i); });
    row.appendChild(el('div', { className: 'field' }, [el('label', { 'for': key.id, text: 'Filter ' + (i + 1) + ' property' }), key]));
    row.appendChild(el('div', { className: 'field' }, [el('label', { 'for': op.id, text: 'Operator' }), op]));
    row.appendChild(valField);
    row.appendChild(rm);
    return row;
  }

  // removeRow removes series or filter i from the JSON (with the keys of
  // it the form does not show), then shows the JSON again.
  function removeRow(box, i) {
    jsonFromForm();
    var q = safeJSON(queryText());
    if (!q) { return; }
    if (box === '#if-series' && Array.isArray(q.series)) { q.series.splice(i, 1); }
    if (box === '#if-filters') {
      var list = flatFilters(q.properties);
      if (list) {
        list.splice(i, 1);
        if (list.length) { q.properties = list; } else { delete q.properties; }
      }
    }
    setQueryText(JSON.stringify(q, null, 2));
    state.texts[state.kind] = queryText();
    formFromJSON();
    renderVariables();
    var add = $(box === '#if-series' ? 'if-add-series' : 'if-add-filter');
    if (add) { add.focus(); }
  }

  // flatFilters are the query's property filters when the form can show
  // them (a list of event property filters), null otherwise.
  function flatFilters(props) {
    if (props === undefined || props === null) { return []; }
    var list = Array.isArray(props) ? props : (props.type === 'AND' && Array.isArray(props.values) && props.values.length === 1 && Array.isArray(props.values[0].values) && props.values[0].type === 'AND' ? props.values[0].values : null);
    if (!list) { return null; }
    for (var i = 0; i < list.length; i++) {
      var f = list[i];
      if (!f || typeof f !== 'object' || typeof f.key !== 'string' || (f.type !== undefined && f.type !== 'event')) { return null; }
    }
    return list;
  }

  function breakdownsOf(q) {
    var bf = q.breakdownFilter;
    if (!bf) { return []; }
    if (Array.isArray(bf.breakdowns)) { return bf.breakdowns.map(function (b) { return b && b.property; }).filter(Boolean); }
    if (typeof bf.breakdown === 'string' && bf.breakdown) { return [bf.breakdown]; }
    return [];
  }

  // formFromJSON shows the JSON in the form.
  function formFromJSON() {
    var note = [];
    var q = safeJSON(queryText());
    var form = $('insight-form');
    if (!q || typeof q !== 'object' || Array.isArray(q)) {
      form.setAttribute('data-json', 'invalid');
      $('if-note').textContent = 'The JSON below does not parse: the form shows it again once it does.';
      return;
    }
    form.setAttribute('data-json', 'ok');
    var kind = state.kind;
    var retention = kind === 'RetentionQuery', lifecycle = kind === 'LifecycleQuery';
    $('if-series-box').hidden = retention;
    $('if-retention').hidden = !retention;
    $('if-interval-field').hidden = retention;
    $('if-breakdowns-field').hidden = lifecycle;
    $('if-add-series').hidden = lifecycle;
    if (!retention) {
      var series = Array.isArray(q.series) ? q.series : [];
      var box = $('if-series');
      clear(box);
      series.forEach(function (s, i) { box.appendChild(seriesRow(i, s || {}, lifecycle)); });
      $('if-interval').value = q.interval || 'day';
    } else {
      var rf = q.retentionFilter || {};
      $('if-target').value = (rf.targetEntity && rf.targetEntity.id) || '';
      $('if-returning').value = (rf.returningEntity && rf.returningEntity.id) || '';
      $('if-period').value = rf.period || 'Day';
      $('if-total').value = rf.totalIntervals === undefined ? '' : String(rf.totalIntervals);
    }
    var dr = q.dateRange || {};
    $('if-date-from').value = dr.date_from || '';
    $('if-date-to').value = dr.date_to || '';
    $('if-breakdowns').value = breakdownsOf(q).join(', ');
    var filters = flatFilters(q.properties);
    var fbox = $('if-filters');
    clear(fbox);
    $('if-add-filter').disabled = filters === null;
    if (filters === null) {
      note.push('its property filters are groups the form does not show: edit them in the JSON');
    } else {
      filters.forEach(function (f, i) { fbox.appendChild(filterRow(i, f)); });
    }
    $('if-note').textContent = note.length ? 'The form shows the JSON below, except that ' + note.join('; ') + '.' : '';
  }

  // jsonFromForm writes the form's fields into the JSON, keeping every key
  // the form does not show.
  function jsonFromForm() {
    var q = safeJSON(queryText());
    if (!q || typeof q !== 'object' || Array.isArray(q)) { return; }
    var kind = state.kind;
    q.kind = kind;
    var val = function (id) { return $(id).value.trim(); };
    if (kind !== 'RetentionQuery') {
      var old = Array.isArray(q.series) ? q.series : [];
      q.series = Array.prototype.map.call($('if-series').children, function (row, i) {
        var s = Object.assign({}, old[i] || {}, { kind: 'EventsNode' });
        var get = function (f) { var e = row.querySelector('[data-f="' + f + '"]'); return e ? e.value.trim() : undefined; };
        var ev = get('event');
        s.event = ev ? ev : null;
        var math = get('math');
        if (math !== undefined) {
          if (math === 'total' && s.math === undefined) { delete s.math; } else { s.math = math; }
          var mp = get('math_property');
          if (needsProperty(math) && mp) { s.math_property = mp; } else { delete s.math_property; }
          row.querySelector('[data-f="math_property"]').parentNode.hidden = !needsProperty(math);
        }
        return s;
      });
      q.interval = $('if-interval').value;
    } else {
      var rf = q.retentionFilter || {};
      rf.targetEntity = Object.assign({}, rf.targetEntity || {}, { id: val('if-target'), type: 'events' });
      rf.returningEntity = Object.assign({}, rf.returningEntity || {}, { id: val('if-returning'), type: 'events' });
      rf.period = $('if-period').value;
      var total = val('if-total');
      if (total === '') { delete rf.totalIntervals; } else { rf.totalIntervals = /^\d+$/.test(total) ? parseInt(total, 10) : total; }
      q.retentionFilter = rf;
    }
    var dr = Object.assign({}, q.dateRange || {});
    if (val('if-date-from')) { dr.date_from = val('if-date-from'); } else { delete dr.date_from; }
    if (val('if-date-to')) { dr.date_to = val('if-date-to'); } else { delete dr.date_to; }
    if (Object.keys(dr).length) { q.dateRange = dr; } else { delete q.dateRange; }
    if (kind !== 'LifecycleQuery') {
      var bds = val('if-breakdowns').split(',').map(function (x) { return x.trim(); }).filter(Boolean);
      var bf = Object.assign({}, q.breakdownFilter || {});
      delete bf.breakdown;
      delete bf.breakdowns;
      delete bf.breakdown_type;
      if (bds.length === 1) { bf.breakdown = bds[0]; } else if (bds.length > 1) {
        bf.breakdowns = bds.map(function (p) { return { property: p, type: 'event' }; });
      }
      if (Object.keys(bf).length) { q.breakdownFilter = bf; } else { delete q.breakdownFilter; }
    }
    if (!$('if-add-filter').disabled) {
      var oldProps = flatFilters(q.properties) || [];
      var props = Array.prototype.map.call($('if-filters').children, function (row, i) {
        var get = function (f) { return row.querySelector('[data-f="' + f + '"]').value.trim(); };
        var op = get('operator');
        var f = Object.assign({}, oldProps[i] || {}, { key: get('key'), operator: op, type: 'event' });
        delete f.value;
        row.querySelector('[data-f="value"]').parentNode.hidden = !takesValue(op);
        if (takesValue(op)) {
          var v = get('value');
          if (op === 'gt' || op === 'lt') { f.value = v !== '' && isFinite(Number(v)) ? Number(v) : v; }
          else if (op === 'exact' || op === 'is_not') { f.value = v.split(',').map(function (x) { return x.trim(); }).filter(function (x) { return x !== ''; }); }
          else { f.value = v; }
        }
        return f;
      });
      if (props.length) { q.properties = props; } else { delete q.properties; }
    }
    setQueryText(JSON.stringify(q, null, 2));
    state.texts[kind] = queryText();
    renderVariables();
  }

  function addSeries() {
    var q = safeJSON(queryText());
    if (!q) { return; }
    q.series = (Array.isArray(q.series) ? q.series : []).concat([{ kind: 'EventsNode', event: '$pageview' }]);
    setQueryText(JSON.stringify(q, null, 2));
    formFromJSON();
    renderVariables();
    var inputs = $('if-series').querySelectorAll('[data-f="event"]');
    if (inputs.length) { inputs[inputs.length - 1].focus(); }
  }
  function addFilter() {
    var q = safeJSON(queryText());
    if (!q) { return; }
    var list = flatFilters(q.properties) || [];
    q.properties = list.concat([{ key: '', operator: 'exact', value: [], type: 'event' }]);
    setQueryText(JSON.stringify(q, null, 2));
    formFromJSON();
    var keys = $('if-filters').querySelectorAll('[data-f="key"]');
    if (keys.length) { keys[keys.length - 1].focus(); }
  }

  function init() {
    code = window.endpointkitCodeEditor.create({
      parent: $('sql'), label: 'SQL', description: $('sql-hint').textContent,
      dialect: DIALECT, placeholder: SQL_PLACEHOLDER, onChange: onSQLInput, onRun: runQuery
    });
    $('login-form').addEventListener('submit', onLogin);
    $('signout').addEventListener('click', function () { signOut('Signed out: the key is forgotten.'); });
    $('kind').addEventListener('change', onKind);
    $('run').addEventListener('click', runQuery);
    $('open-save').addEventListener('click', openSave);
    $('save-cancel').addEventListener('click', closeSave);
    $('save-form').addEventListener('submit', onSave);
    $('save-form').addEventListener('keydown', function (ev) { if (ev.key === 'Escape') { closeSave(); } });
    $('variable-form').addEventListener('submit', onCreateVariable);
    $('var-type').addEventListener('change', onTypeChange);
    $('refresh-endpoints').addEventListener('click', loadEndpoints);
    $('insight-form').addEventListener('input', jsonFromForm);
    $('insight-form').addEventListener('change', jsonFromForm);
    $('if-add-series').addEventListener('click', addSeries);
    $('if-add-filter').addEventListener('click', addFilter);
    $('confirm-yes').addEventListener('click', onConfirm);
    $('confirm-no').addEventListener('click', function () { closeConfirm(); $('refresh-endpoints').focus(); });
    $('confirm').addEventListener('keydown', function (ev) { if (ev.key === 'Escape') { closeConfirm(); $('refresh-endpoints').focus(); } });
    $('stop-editing').addEventListener('click', function () { stopEditing(); code.focus(); });
    window.addEventListener('resize', fitCurl);
    $('run-form').addEventListener('submit', onRunEndpoint);
    $('run-version').addEventListener('change', loadRunSchema);
    $('tabs').addEventListener('keydown', onTabKey);
    $('panel-variables').addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey) && /^i?test-/.test(ev.target.id || '')) { ev.preventDefault(); runQuery(); }
    });
    Array.prototype.forEach.call(document.querySelectorAll('[role=tab]'), function (tab) {
      tab.addEventListener('click', function () { selectTab(tab.id); tab.focus(); });
    });
    state.key = sessionStorage.getItem(STORE_KEY) || '';
    state.project = sessionStorage.getItem(STORE_PROJECT) || DEFAULT_PROJECT;
    state.kind = '';
    onKind();
    if (state.key) { startApp(); } else { showLogin(''); }
  }

  // For tests, and for a host that wants to reuse the scanner.
  window.endpointkitEditor = {
    scanPlaceholders: scanPlaceholders,
    insightVariables: insightVariables,
    formatCell: formatCell,
    errorPosition: errorPosition,
    // The query's text, and the error marked in it (tests read them).
    text: function () { return code.text(); },
    marked: function () { return code.marked(); },
    code: function () { return code; }
  };

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
}());
