// endpointkit editor: plain JavaScript, no library, no build step.
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
    versions: []
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
    return Promise.all([loadVariables(), loadEndpoints()]).then(function () {
      if (!$('app').hidden) { $('sql').focus(); }
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
    } else {
      input = el('input', { id: id, type: 'text', spellcheck: 'false', autocomplete: 'off' });
      if (v && v.type === 'Date') { input.setAttribute('placeholder', 'YYYY-MM-DD or -7d'); }
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
    var text = $('sql').value;
    var tbody = $('placeholders').querySelector('tbody');
    clear(tbody);
    $('scan-error').textContent = '';
    var rows = [];
    var missing = 0;
    if (state.kind === SQL) {
      var scan = scanPlaceholders(text);
      state.placeholders = scan.names;
      if (scan.error) {
        $('scan-error').textContent = 'Placeholder syntax at line ' + scan.error.line + ', column ' + scan.error.column + ': ' + scan.error.message;
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
          tr.appendChild(el('td', { text: v.name }));
          tr.appendChild(el('td', { text: v.type + (v.is_multi ? ' (several)' : '') }));
          tr.appendChild(el('td', { text: v.default_value === null || v.default_value === undefined ? '—' : display(v.default_value) }));
          var f = valueInput('test-' + name, 'Test value for ' + name, v, state.testValues, testKey(v));
          var td = el('td', null, [f.label, f.input]);
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
    var text = $('sql').value;
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
        if (insightVariables(safeJSON($('sql').value)).indexOf(name) >= 0) { out[name] = state.testValues[k]; any = true; }
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
      row.forEach(function (v) {
        var td = el('td', { text: display(v) });
        if (typeof v === 'number') { td.className = 'num'; }
        if (v === null || v === undefined) { td.className = 'null'; }
        r.appendChild(td);
      });
      tb.appendChild(r);
    });
    t.appendChild(tb);
    return t;
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
    $('save-form').hidden = false;
    setError('save-error', null);
    $('save-name').focus();
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
    api('POST', '/endpoints/', body).then(function (ep) {
      $('save-form').hidden = true;
      $('save-name').value = '';
      $('save-description').value = '';
      $('saved').hidden = false;
      $('saved-message').textContent = 'Saved endpoint \'' + ep.name + '\', version ' + ep.current_version + '.';
      $('saved-curl').value = curlFor(ep);
      $('saved').focus();
      return loadEndpoints();
    }, function (err) {
      setError('save-error', err);
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

  function renderEndpoints() {
    var tbody = $('endpoints').querySelector('tbody');
    clear(tbody);
    state.endpoints.forEach(function (ep) {
      var tr = el('tr', { 'data-endpoint': ep.name });
      tr.appendChild(el('td', null, [el('code', { text: ep.name })]));
      tr.appendChild(el('td', { text: ep.description || '' }));
      tr.appendChild(el('td', { text: 'v' + ep.current_version + ' (' + ep.versions_count + (ep.versions_count === 1 ? ' version)' : ' versions)') }));
      var m = ep.materialization || {};
      var mat = el('td', { text: m.can_materialize ? 'yes' : 'no' });
      if (!m.can_materialize && m.reason) { mat.setAttribute('title', m.reason); mat.textContent = 'no: ' + m.reason; }
      tr.appendChild(mat);
      var run = el('button', { type: 'button', text: 'Run…', 'aria-label': 'Run endpoint ' + ep.name, 'data-run': ep.name });
      run.addEventListener('click', function () { openRun(ep); });
      tr.appendChild(el('td', null, [run]));
      tbody.appendChild(tr);
    });
    $('endpoints').hidden = state.endpoints.length === 0;
    $('no-endpoints').hidden = state.endpoints.length > 0;
  }

  function openRun(ep) {
    state.runTarget = ep;
    state.runValues = {};
    $('run-form').hidden = false;
    $('run-name').textContent = ep.name;
    setError('run-endpoint-error', null);
    $('run-endpoint-status').textContent = '';
    clear($('run-endpoint-results'));
    clear($('run-endpoint-chart'));
    var select = $('run-version');
    clear(select);
    return api('GET', '/endpoints/' + encodeURIComponent(ep.name) + '/versions/').then(function (body) {
      state.versions = (body && body.results) || [];
      state.versions.slice().reverse().forEach(function (v) {
        select.appendChild(el('option', { value: String(v.version), text: 'Version ' + v.version + (v.version === ep.current_version ? ' (current)' : '') + ' · ' + (v.created_at || '').slice(0, 19).replace('T', ' ') }));
      });
      renderRunFields();
      select.focus();
    }, function (err) { setError('run-endpoint-error', err); });
  }

  function selectedVersion() {
    var n = parseInt($('run-version').value, 10);
    for (var i = 0; i < state.versions.length; i++) { if (state.versions[i].version === n) { return state.versions[i]; } }
    return null;
  }

  // renderRunFields builds the run form's inputs from the variables of the
  // chosen version's query.
  function renderRunFields() {
    var box = $('run-fields');
    clear(box);
    var version = selectedVersion();
    var q = version ? version.query : (state.runTarget && state.runTarget.query);
    $('run-query').querySelector('pre').textContent = q ? (q.kind === SQL ? q.query : JSON.stringify(q, null, 2)) : '';
    var fields = [];
    if (q && q.kind === SQL) {
      Object.keys(q.variables || {}).forEach(function (id) {
        var ref = q.variables[id];
        fields.push({ name: ref.code_name, v: variableByID(id) || { type: 'String' } });
      });
      fields.sort(function (a, b) { return a.name < b.name ? -1 : 1; });
    } else if (q) {
      insightVariables(q).forEach(function (n) { fields.push({ name: n, v: { type: n === 'date_from' || n === 'date_to' ? 'Date' : 'String' }, optional: true }); });
    }
    fields.forEach(function (f, i) {
      var id = 'run-var-' + i;
      var made = valueInput(id, f.name, f.v, state.runValues, f.name);
      made.label.className = '';
      made.label.textContent = f.name + ' (' + f.v.type + (f.optional ? ', optional' : '') + ')';
      made.input.setAttribute('data-variable', f.name);
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
    var q = version ? version.query : ep.query;
    Array.prototype.forEach.call($('run-fields').querySelectorAll('[data-variable]'), function (input) {
      var name = input.getAttribute('data-variable');
      var v = null;
      if (q && q.kind === SQL) {
        Object.keys(q.variables || {}).forEach(function (id) { if (q.variables[id].code_name === name) { v = variableByID(id); } });
      }
      var value = wireValue(input.value, v);
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
      $('run-endpoint-status').textContent = n + ' from version ' + res.endpoint_version + (res.hasMore ? ' (more exist)' : '') + ' · ' + Math.round(performance.now() - started) + ' ms';
    }, function (err) {
      $('run-endpoint-status').textContent = '';
      clear($('run-endpoint-results'));
      clear($('run-endpoint-chart'));
      setError('run-endpoint-error', err);
    }).then(function () { busy(button, false); });
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
    state.texts[state.kind] = $('sql').value;
    state.kind = $('kind').value;
    $('sql').value = state.texts[state.kind] || '';
    $('sql-label').textContent = state.kind === SQL ? 'SQL' : state.kind + ' JSON';
    renderVariables();
  }

  var renderTimer = 0;
  function onSQLInput() {
    clearTimeout(renderTimer);
    renderTimer = setTimeout(renderVariables, 120);
  }

  function init() {
    $('login-form').addEventListener('submit', onLogin);
    $('signout').addEventListener('click', function () { signOut('Signed out: the key is forgotten.'); });
    $('kind').addEventListener('change', onKind);
    $('sql').addEventListener('input', onSQLInput);
    $('sql').addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runQuery(); }
    });
    $('run').addEventListener('click', runQuery);
    $('open-save').addEventListener('click', openSave);
    $('save-cancel').addEventListener('click', closeSave);
    $('save-form').addEventListener('submit', onSave);
    $('save-form').addEventListener('keydown', function (ev) { if (ev.key === 'Escape') { closeSave(); } });
    $('variable-form').addEventListener('submit', onCreateVariable);
    $('var-type').addEventListener('change', onTypeChange);
    $('refresh-endpoints').addEventListener('click', loadEndpoints);
    $('run-form').addEventListener('submit', onRunEndpoint);
    $('run-version').addEventListener('change', renderRunFields);
    $('tabs').addEventListener('keydown', onTabKey);
    $('panel-variables').addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey) && /^i?test-/.test(ev.target.id || '')) { ev.preventDefault(); runQuery(); }
    });
    Array.prototype.forEach.call(document.querySelectorAll('[role=tab]'), function (tab) {
      tab.addEventListener('click', function () { selectTab(tab.id); tab.focus(); });
    });
    state.key = sessionStorage.getItem(STORE_KEY) || '';
    state.project = sessionStorage.getItem(STORE_PROJECT) || DEFAULT_PROJECT;
    renderVariables();
    if (state.key) { startApp(); } else { showLogin(''); }
  }

  // For tests, and for a host that wants to reuse the scanner.
  window.endpointkitEditor = { scanPlaceholders: scanPlaceholders, insightVariables: insightVariables };

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
}());
