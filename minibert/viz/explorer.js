// minibert explorer: the views of minibert/viz/explorer.py, in plain JavaScript.
// No library and no network: the data comes from the JSON element beside the root, and
// every text a user typed goes into the page through textContent or setAttribute only.
// Layers and heads are counted from 0. Rows are queries, columns are keys.
"use strict";

var minibertExplore = (function () {
  var SVG_NS = (function () {
    var holder = document.createElement("div");
    holder.innerHTML = "<svg></svg>";  // a constant: the parser gives it SVG's namespace
    return holder.firstChild.namespaceURI;
  })();

  var CSS = [
    // The page fills its window: text and figures grow with it, for a projector.
    ".mbx{font:clamp(13px,1.1vw,24px)/1.4 system-ui,sans-serif;color:#222;background:#fff;color-scheme:light;padding:4px 8px;border-radius:4px}",
    // a light card of its own: inside a dark page (a notebook's dark theme) the text stays readable
    ".mbx button,.mbx select,.mbx input{color:#222;font:inherit}",
    ".mbx h3{color:#222;margin:0.3em 0}",
    ".mbx svg.mbx-figure{height:auto}",
    ".mbx-tabs button{margin:0 2px 4px 0;padding:3px 9px;border:1px solid #aaa;background:#f4f4f4;border-radius:3px;cursor:pointer}",
    ".mbx-tabs button.mbx-on{background:#1f4e8c;color:#fff;border-color:#1f4e8c}",
    ".mbx-bar{margin:4px 0;display:flex;flex-wrap:wrap;gap:8px;align-items:center}",
    ".mbx-bar label{white-space:nowrap}",
    ".mbx-note{color:#555;font-size:0.92em;margin:4px 0}",
    ".mbx svg text{font-family:system-ui,sans-serif}",
    ".mbx-token{cursor:pointer}",
    ".mbx-unknown{text-decoration:underline dotted #b03030}",
    ".mbx-grid{display:flex;flex-direction:column;gap:6px}",
    ".mbx-row{display:flex;gap:6px}",
    ".mbx-cellbox{border:1px solid #ddd;padding:3px;cursor:pointer;font-size:1em;line-height:1.25}",
    ".mbx-cellbox:hover{border-color:#1f4e8c}",
    ".mbx-thumb{display:block;image-rendering:pixelated}",
    ".mbx-job{white-space:nowrap}",
    ".mbx-side{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start}"
  ].join("\n");

  // -- data ------------------------------------------------------------------------------
  function bytesOf(base64) {
    var text = atob(base64), out = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }

  var TYPES = {u8: Uint8Array, i8: Int8Array, u16: Uint16Array, i16: Int16Array, i32: Int32Array};

  // A packed array (explore.py's _pack_ints) -> {shape, values, decimals}.
  function unpack(packed) {
    var stream = new Blob([bytesOf(packed.data)]).stream()
      .pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).arrayBuffer().then(function (buffer) {
      var ints = new TYPES[packed.dtype](buffer), steps = packed.steps;
      var block = ints.length / steps.length, values = new Float64Array(ints.length);
      var scale = packed.decimals === null ? 0 : Math.pow(10, packed.decimals);
      for (var i = 0; i < ints.length; i++) {
        values[i] = scale ? ints[i] / scale : ints[i] * steps[Math.floor(i / block)];
      }
      return {shape: packed.shape, values: values, decimals: packed.decimals};
    });
  }

  // Unpack every packed array inside ``node`` in place.
  function unpackAll(node) {
    var jobs = [];
    Object.keys(node).forEach(function (key) {
      var value = node[key];
      if (value && typeof value === "object" && !Array.isArray(value)) {
        if (typeof value.data === "string" && value.dtype) {
          jobs.push(unpack(value).then(function (array) { node[key] = array; }));
        } else {
          jobs.push(unpackAll(value));
        }
      }
    });
    return Promise.all(jobs);
  }

  // The (T, T) matrix at leading indices ``index`` of an (..., T, T) array, as rows.
  function matrix(array, index) {
    var shape = array.shape, size = shape[shape.length - 1], offset = 0, stride = size * size;
    for (var d = index.length - 1, s = stride; d >= 0; d--) {
      offset += index[d] * s;
      s *= shape[d];
    }
    var rows = [];
    for (var i = 0; i < size; i++) rows.push(Array.from(array.values.subarray(offset + i * size, offset + (i + 1) * size)));
    return rows;
  }

  function row(array, index) {  // the last axis at leading indices ``index``
    var shape = array.shape, offset = 0, s = shape[shape.length - 1];
    for (var d = index.length - 1; d >= 0; d--) { offset += index[d] * s; s *= shape[d]; }
    return Array.from(array.values.subarray(offset, offset + shape[shape.length - 1]));
  }

  function mean(matrices) {
    var out = matrices[0].map(function (r) { return r.map(function () { return 0; }); });
    matrices.forEach(function (m) {
      m.forEach(function (r, i) { r.forEach(function (v, j) { out[i][j] += v / matrices.length; }); });
    });
    return out;
  }

  // -- the display options of viz.attention.for_display -------------------------------------
  function wordGroups(labels, special) {
    var groups = [];
    labels.forEach(function (token, i) {
      var last = groups.length ? groups[groups.length - 1] : null;
      if (token.slice(0, 2) === "##" && last && !special[i] && !special[last[last.length - 1]]) {
        last.push(i);
      } else {
        groups.push([i]);
      }
    });
    return groups;
  }

  // {m, labels, segments, positions}: special tokens kept/hidden/renormalized, then pieces merged.
  function display(m, data, options) {
    var keep = data.tokens.map(function (_, i) { return i; });
    if (options.special !== "keep") keep = keep.filter(function (i) { return !data.special[i]; });
    var sub = keep.map(function (i) { return keep.map(function (j) { return m[i][j]; }); });
    if (options.special === "renormalize") {
      sub = sub.map(function (r) {
        var total = r.reduce(function (a, b) { return a + b; }, 0);
        return r.map(function (v) { return total > 0 ? v / total : 0; });
      });
    }
    var labels = keep.map(function (i) { return data.tokens[i]; });
    var special = keep.map(function (i) { return data.special[i]; });
    var groups = options.merge ? wordGroups(labels, special) : labels.map(function (_, i) { return [i]; });
    var merged = groups.map(function (from) {
      return groups.map(function (to) {
        var total = 0;
        from.forEach(function (i) { to.forEach(function (j) { total += sub[i][j]; }); });
        return total / from.length;  // sum over the key pieces, mean over the query pieces
      });
    });
    return {
      m: merged,
      labels: groups.map(function (g) {
        return labels[g[0]] + g.slice(1).map(function (i) { return labels[i].slice(2); }).join("");
      }),
      segments: groups.map(function (g) { return data.segments[keep[g[0]]]; }),
      positions: groups.map(function (g) { return g.map(function (i) { return keep[i]; }); })
    };
  }

  // -- drawing helpers ---------------------------------------------------------------------
  function el(tag, attributes, parent, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function svgEl(tag, attributes, parent, text) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  // Attention colours: the slides' colour map (cividis), dark = 0, light = 1, interpolated
  // between the stops the page carries (data.colormap).
  var STOPS = [[0, 34, 78], [255, 234, 70]];

  function setColormap(hexes) {
    if (!hexes || hexes.length < 2) return;
    STOPS = hexes.map(function (h) {
      return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
    });
  }

  function attentionColor(v) {
    var t = Math.max(0, Math.min(1, v)) * (STOPS.length - 1), i = Math.min(STOPS.length - 2, Math.floor(t));
    var f = t - i, a = STOPS[i], b = STOPS[i + 1];
    return "rgb(" + Math.round(a[0] + (b[0] - a[0]) * f) + "," + Math.round(a[1] + (b[1] - a[1]) * f) +
      "," + Math.round(a[2] + (b[2] - a[2]) * f) + ")";
  }

  function diverging(v) {  // -1 -> blue, 0 -> white, 1 -> red
    var t = Math.max(-1, Math.min(1, v)), a = Math.abs(t);
    return t >= 0
      ? "rgb(255," + Math.round(255 - 200 * a) + "," + Math.round(255 - 215 * a) + ")"
      : "rgb(" + Math.round(255 - 215 * a) + "," + Math.round(255 - 165 * a) + ",255)";
  }

  function fixed(v, decimals) { return (Math.round(v * Math.pow(10, decimals)) / Math.pow(10, decimals)).toFixed(decimals); }

  function significant(v) { return v === 0 ? "0" : v.toPrecision(3); }

  function maxAbs(m) {
    var top = 0;
    m.forEach(function (r) { r.forEach(function (v) { top = Math.max(top, Math.abs(v)); }); });
    return top;
  }

  // A heatmap (rows queries, columns keys) as an SVG figure.
  function heatmap(parent, m, labels, options) {
    var cell = Math.max(6, Math.min(22, Math.floor((options.size || 440) / m.length)));
    var left = 90, top = 70, n = m.length, scale = options.diverging ? (maxAbs(m) || 1) : 1;
    var font = Math.min(11, cell);
    var svg = svgEl("svg", {"class": "mbx-figure mbx-heatmap", width: left + n * cell + 20,
      height: top + n * cell + 30}, parent);
    svgEl("text", {x: 4, y: 14, "font-size": 12, "font-weight": "bold"}, svg, options.title);
    labels.forEach(function (label, i) {
      svgEl("text", {x: left - 4, y: top + i * cell + cell * 0.75, "text-anchor": "end",
        "font-size": font}, svg, label);
      svgEl("text", {transform: "translate(" + (left + i * cell + cell * 0.75) + "," + (top - 4) + ") rotate(-60)",
        "font-size": font}, svg, label);
    });
    m.forEach(function (r, i) {
      r.forEach(function (v, j) {
        var rect = svgEl("rect", {"class": "mbx-cell", x: left + j * cell, y: top + i * cell,
          width: cell, height: cell, fill: options.diverging ? diverging(v / scale) : attentionColor(v),
          "data-row": i, "data-col": j}, svg);
        svgEl("title", {}, rect, labels[i] + " \u2192 " + labels[j] + ": " +
          (options.diverging ? "\u2248 " + significant(v) : fixed(v, options.decimals)));
      });
    });
    return svg;
  }

  // -- the explorer ------------------------------------------------------------------------
  function build(root, data) {
    var model = data.model, L = model.layers, N = model.heads;
    var opening = data.opening || {layer: 0, head: 0};
    setColormap(data.colormap);
    var state = {view: "head", layer: opening.layer, head: opening.head, source: "head", filter: "all",
      special: "keep", merge: false, selected: [], query: 0, step: 0, enlarged: null};
    var decimals = data.attentions.decimals;
    root.textContent = "";
    el("h3", {}, root, data.title);
    if (data.unknown_line) {
      el("p", {"class": "mbx-note mbx-unknown-line"}, root, "Unknown to this model (underlined " +
        "dotted below): " + data.unknown_line);
    }
    if (data.opening) {
      el("p", {"class": "mbx-note mbx-opening"}, root, "Opened on layer " + opening.layer + " \u00b7 head " +
        opening.head + ": the head with the highest job score (" + opening.job + ", " +
        opening.score.toFixed(2) + "). Choose any other below.");
    }
    var tabs = el("div", {"class": "mbx-tabs"}, root);
    var views = [["head", "Head view"], ["model", "Model view"], ["neuron", "Neuron view"],
      ["backward", "Backward view"], ["aggregate", "Aggregation"], ["timeline", "Training timeline"]];
    var buttons = {};
    views.forEach(function (v) {
      buttons[v[0]] = el("button", {type: "button", "data-view": v[0]}, tabs, v[1]);
      buttons[v[0]].addEventListener("click", function () { state.view = v[0]; render(); });
    });
    var bar = el("div", {"class": "mbx-bar"}, root);

    function select(labelText, name, options, value, onChange) {
      var label = el("label", {}, bar, labelText + " ");
      var box = el("select", {name: name}, label);
      options.forEach(function (o) { el("option", {value: String(o[0])}, box, o[1]); });
      box.value = String(value);
      box.addEventListener("change", function () { onChange(box.value); render(); });
      return box;
    }

    var range = function (n, word) {
      var out = [];
      for (var i = 0; i < n; i++) out.push([i, word + " " + i]);
      return out;
    };
    select("Layer", "layer", range(L, "layer"), opening.layer, function (v) { state.layer = +v; });
    select("Head", "head", range(N, "head"), opening.head, function (v) { state.head = +v; });
    select("Show", "source", [["head", "this head"], ["layer", "mean over this layer's heads"],
      ["all", "mean over all layers and heads"], ["rollout", "rollout up to this layer"]], "head",
      function (v) { state.source = v; });
    if (data.pair) {
      select("Lines", "filter", [["all", "all"], ["ab", "sentence A \u2192 B"], ["ba", "sentence B \u2192 A"]],
        "all", function (v) { state.filter = v; });
    }
    select("Special tokens", "special", [["keep", "keep"], ["hide", "hide"], ["renormalize", "hide, rows renormalized"]],
      "keep", function (v) { state.special = v; state.selected = []; });
    var mergeLabel = el("label", {}, bar);
    var merge = el("input", {type: "checkbox", name: "merge"}, mergeLabel);
    mergeLabel.appendChild(document.createTextNode(" merge word pieces"));
    merge.addEventListener("change", function () { state.merge = merge.checked; state.selected = []; render(); });
    var svgButton = el("button", {type: "button", name: "download-svg"}, bar, "Download SVG");
    var pngButton = el("button", {type: "button", name: "download-png"}, bar, "Download PNG");
    var panel = el("div", {"class": "mbx-panel"}, root);
    el("p", {"class": "mbx-note"}, root, "Layers and heads are counted from 0; rows are queries, " +
      "columns keys. Stored precision: probabilities to " + decimals + " decimals, q\u00b7k to 2, " +
      "gradients, q and k to 1 part in 127 of each head's largest value. " +
      "Merged words sum their pieces' columns and average their rows.");

    function source(layer, head) {
      if (state.source === "head") return matrix(data.attentions, [layer, head]);
      if (state.source === "layer") {
        var heads = [];
        for (var h = 0; h < N; h++) heads.push(matrix(data.attentions, [layer, h]));
        return mean(heads);
      }
      if (state.source === "rollout") return matrix(data.rollout, [layer]);
      var all = [];
      for (var l = 0; l < L; l++) for (var k = 0; k < N; k++) all.push(matrix(data.attentions, [l, k]));
      return mean(all);
    }

    function sourceName() {
      return {head: "layer " + state.layer + " \u00b7 head " + state.head,
        layer: "layer " + state.layer + ", mean over heads", all: "mean over all layers and heads",
        rollout: "rollout up to layer " + state.layer}[state.source];
    }

    function note(text) { return el("p", {"class": "mbx-note"}, panel, text); }

    // Head view: lines from queries (left) to keys (right).
    function headView() {
      var shown = display(source(state.layer, state.head), data, state), K = shown.labels.length;
      var step = 18, top = 40, xl = 150, xr = 470;
      var svg = svgEl("svg", {"class": "mbx-figure mbx-headview", width: 640, height: top + K * step + 10}, panel);
      svgEl("text", {x: 4, y: 16, "font-size": 12, "font-weight": "bold"}, svg, sourceName());
      svgEl("text", {x: xl - 10, y: 32, "text-anchor": "end", "font-size": 11, fill: "#666"}, svg, "queries");
      svgEl("text", {x: xr + 10, y: 32, "font-size": 11, fill: "#666"}, svg, "keys");
      var lines = svgEl("g", {"class": "mbx-lines"}, svg);
      var weights = svgEl("g", {"class": "mbx-weights"}, svg);
      var allowed = function (i, j) {
        if (state.filter === "ab") return shown.segments[i] === 0 && shown.segments[j] === 1;
        if (state.filter === "ba") return shown.segments[i] === 1 && shown.segments[j] === 0;
        return true;
      };
      function draw(focus) {
        lines.textContent = "";
        weights.textContent = "";
        for (var i = 0; i < K; i++) {
          for (var j = 0; j < K; j++) {
            var w = shown.m[i][j];
            if (!allowed(i, j) || w < 0.005) continue;
            if (focus && ((focus.side === "q" && focus.index !== i) || (focus.side === "k" && focus.index !== j))) continue;
            svgEl("line", {"class": "mbx-line", x1: xl, y1: top + i * step, x2: xr, y2: top + j * step,
              stroke: "#1f4e8c", "stroke-width": 2, "stroke-opacity": Math.min(1, w).toFixed(3),
              "data-query": i, "data-key": j}, lines);
          }
        }
        if (!focus) return;
        for (var n = 0; n < K; n++) {
          var q = focus.side === "q" ? focus.index : n, k = focus.side === "q" ? n : focus.index;
          if (!allowed(q, k)) continue;
          var x = focus.side === "q" ? xr + 95 : xl - 95;
          svgEl("text", {"class": "mbx-weight", x: x, y: top + n * step + 4, "font-size": 11,
            "text-anchor": focus.side === "q" ? "start" : "end", fill: "#b03030",
            "data-query": q, "data-key": k}, weights, fixed(shown.m[q][k], decimals));
        }
      }
      shown.labels.forEach(function (label, i) {
        var selected = state.selected.indexOf(i) >= 0;
        var unknown = (data.unknown || []).length && shown.positions[i].some(function (p) { return data.unknown[p]; });
        var marked = unknown ? " mbx-unknown" : "";
        var left = svgEl("text", {"class": "mbx-token mbx-query" + marked, x: xl - 8, y: top + i * step + 4,
          "text-anchor": "end", "font-size": 12, "data-index": i,
          "font-weight": selected ? "bold" : "normal", fill: shown.segments[i] ? "#7a3b00" : "#1f3a60"}, svg, label);
        var right = svgEl("text", {"class": "mbx-token mbx-key" + marked, x: xr + 8, y: top + i * step + 4,
          "font-size": 12, "data-index": i, fill: shown.segments[i] ? "#7a3b00" : "#1f3a60"}, svg, label);
        left.addEventListener("mouseenter", function () { draw({side: "q", index: i}); });
        right.addEventListener("mouseenter", function () { draw({side: "k", index: i}); });
        left.addEventListener("mouseleave", function () { draw(null); });
        right.addEventListener("mouseleave", function () { draw(null); });
        left.addEventListener("click", function () {
          var at = state.selected.indexOf(i);
          if (at >= 0) state.selected.splice(at, 1); else state.selected.push(i);
          render();
        });
      });
      draw(null);
      note("Hover a token to isolate its lines and read its weights; click query tokens to " +
        "select them and see their summed attention below.");
      selectionBars(shown);
    }

    function selectionBars(shown) {
      if (!state.selected.length) return;
      var K = shown.labels.length, width = Math.max(20, Math.min(40, Math.floor(900 / K)));
      var sums = shown.labels.map(function (_, j) {
        return state.selected.reduce(function (a, i) { return a + shown.m[i][j]; }, 0);
      });
      var top = Math.max.apply(null, sums) || 1;
      var svg = svgEl("svg", {"class": "mbx-selection", width: K * width + 20, height: 170}, panel);
      svgEl("text", {x: 4, y: 14, "font-size": 12}, svg, "summed attention of " +
        state.selected.map(function (i) { return shown.labels[i]; }).join(" + ") + " to each key");
      sums.forEach(function (v, j) {
        var h = 80 * v / top;
        svgEl("rect", {x: 10 + j * width, y: 110 - h, width: width - 4, height: h, fill: "#1f4e8c"}, svg);
        svgEl("text", {"class": "mbx-sum", x: 10 + j * width, y: 106 - h, "font-size": 9, "data-key": j}, svg, fixed(v, decimals));
        svgEl("text", {transform: "translate(" + (14 + j * width) + ",118) rotate(60)", "font-size": 10}, svg, shown.labels[j]);
      });
    }

    // Model view: every layer x head as a thumbnail with its head-job scores.
    function modelView() {
      var T = data.tokens.length, px = Math.max(1, Math.floor(Math.min(96, 1000 / N) / T));
      var short = {"previous token": "prev", "next token": "next", "same word": "word"};
      note("Head-job scores under each head: mean attention of a query to the previous token " +
        "(prev), the next token (next), [SEP], [CLS], and the other pieces of its word (word; " +
        "\u2013 when no word has several pieces), after Clark et al. (2019). Click a head to enlarge it.");
      if (state.enlarged) {
        var shown = display(matrix(data.attentions, state.enlarged), data, state);
        heatmap(panel, shown.m, shown.labels, {title: "layer " + state.enlarged[0] + " \u00b7 head " +
          state.enlarged[1], decimals: decimals});
      }
      var grid = el("div", {"class": "mbx-grid"}, panel);
      for (var l = 0; l < L; l++) {
        var line = el("div", {"class": "mbx-row"}, grid);
        for (var h = 0; h < N; h++) {
          (function (layer, head) {
            var box = el("div", {"class": "mbx-cellbox", "data-layer": layer, "data-head": head}, line);
            box.style.width = Math.max(T * px, 110) + "px";
            el("div", {}, box, "L" + layer + " \u00b7 H" + head);
            var canvas = el("canvas", {"class": "mbx-thumb", width: T, height: T}, box);
            canvas.style.width = canvas.style.height = T * px + "px";
            var context = canvas.getContext("2d"), image = context.createImageData(T, T);
            matrix(data.attentions, [layer, head]).forEach(function (r, i) {
              r.forEach(function (v, j) {
                var rgb = attentionColor(v).slice(4, -1).split(","), at = 4 * (i * T + j);
                image.data[at] = +rgb[0]; image.data[at + 1] = +rgb[1]; image.data[at + 2] = +rgb[2]; image.data[at + 3] = 255;
              });
            });
            context.putImageData(image, 0, 0);
            var jobs = el("div", {"class": "mbx-jobs"}, box);
            Object.keys(data.jobs).forEach(function (job) {
              var v = data.jobs[job][layer][head];
              el("span", {"class": "mbx-job", title: job}, jobs,
                (short[job] || job) + " " + (v < 0 ? "\u2013" : v.toFixed(2)));
              jobs.appendChild(document.createTextNode(" "));  // a place to wrap
            });
            box.addEventListener("click", function () {
              state.layer = layer; state.head = head; state.enlarged = [layer, head]; syncSelectors(); render();
            });
          })(l, h);
        }
      }
    }

    // Neuron view: q, k, q*k, q.k, /sqrt(D), softmax for one query and head.
    function neuronView() {
      var neuron = data.neuron, layers = neuron.layers, D = model.head_size, T = data.tokens.length;
      if (layers.indexOf(state.layer) < 0) {  // not carried: the nearest layer that is
        state.layer = layers.reduce(function (best, l) {
          return Math.abs(l - state.layer) < Math.abs(best - state.layer) ? l : best;
        });
        syncSelectors();
      }
      var at = layers.indexOf(state.layer);
      if (layers.length < L) {
        note("To stay within the page's size budget, the neuron view carries layer" +
          (layers.length > 1 ? "s " : " ") + layers.join(", ") + " of 0\u2013" + (L - 1) + ".");
      }
      var queryBar = el("div", {"class": "mbx-bar"}, panel);
      var label = el("label", {}, queryBar, "Query token ");
      var box = el("select", {name: "query"}, label);
      data.tokens.forEach(function (t, i) { el("option", {value: String(i)}, box, i + ": " + t); });
      box.value = String(state.query);
      box.addEventListener("change", function () { state.query = +box.value; render(); });
      var q = row(neuron.q, [at, state.head, state.query]);
      var keys = [], products = [];
      for (var j = 0; j < T; j++) {
        var k = row(neuron.k, [at, state.head, j]);
        keys.push(k);
        products.push(k.map(function (v, d) { return v * q[d]; }));
      }
      var vectorScale = Math.max(maxAbs([q]), maxAbs(keys)) || 1, productScale = maxAbs(products) || 1;
      var cell = Math.max(3, Math.min(10, Math.floor(260 / D))), x0 = 100, x1 = x0 + D * cell + 20;
      var x2 = x1 + D * cell + 20, step = 16, top = 56;
      var svg = svgEl("svg", {"class": "mbx-figure mbx-neuron", width: x2 + 240, height: top + (T + 1) * step + 10}, panel);
      svgEl("text", {x: 4, y: 14, "font-size": 12, "font-weight": "bold"}, svg, "layer " + state.layer +
        " \u00b7 head " + state.head + " \u00b7 query " + state.query + " (" + data.tokens[state.query] + ")");
      [["q / k", x0], ["q \u2218 k", x1], ["q\u00b7k", x2 + 40], ["\u00d7 1/\u221a" + D, x2 + 110], ["softmax", x2 + 190]]
        .forEach(function (h) { svgEl("text", {x: h[1], y: 36, "font-size": 11, "text-anchor": h[1] > x2 ? "end" : "start"}, svg, h[0]); });
      function strip(values, scale, x, y, name) {
        values.forEach(function (v, d) {
          var rect = svgEl("rect", {x: x + d * cell, y: y - 10, width: cell, height: 12, fill: diverging(v / scale)}, svg);
          svgEl("title", {}, rect, name + "[" + d + "] \u2248 " + significant(v));
        });
      }
      svgEl("text", {x: x0 - 6, y: top, "text-anchor": "end", "font-size": 11, "font-weight": "bold"}, svg, "q: " + data.tokens[state.query]);
      strip(q, vectorScale, x0, top, "q");
      var scores = matrix(neuron.scores, [at, state.head])[state.query];
      var scaled = matrix(neuron.scaled, [at, state.head])[state.query];
      var probs = matrix(data.attentions, [state.layer, state.head])[state.query];
      for (var key = 0; key < T; key++) {
        var y = top + (key + 1) * step;
        svgEl("text", {x: x0 - 6, y: y, "text-anchor": "end", "font-size": 11}, svg, "k: " + data.tokens[key]);
        strip(keys[key], vectorScale, x0, y, "k");
        strip(products[key], productScale, x1, y, "q\u2218k");
        svgEl("text", {"class": "mbx-qk", x: x2 + 40, y: y, "text-anchor": "end", "font-size": 11, "data-key": key}, svg, fixed(scores[key], 2));
        svgEl("text", {"class": "mbx-scaled", x: x2 + 110, y: y, "text-anchor": "end", "font-size": 11, "data-key": key}, svg, fixed(scaled[key], 2));
        svgEl("rect", {x: x2 + 196, y: y - 10, width: 40 * probs[key], height: 11, fill: "#1f4e8c"}, svg);
        svgEl("text", {"class": "mbx-softmax", x: x2 + 190, y: y, "text-anchor": "end", "font-size": 11, "data-key": key}, svg, fixed(probs[key], decimals));
      }
      note("q and k are recomputed from the layer's input and weights; the softmax of q\u00b7k/\u221aD " +
        "equals the model's attention probabilities to " + neuron.max_difference.toExponential(1) +
        ". Hover a cell for its value. Colours: red positive, blue negative.");
    }

    // The page's data[key], or nothing after a note that says why the view stays empty.
    function carried(key, why) {
      if (!data[key]) note(why);
      return data[key];
    }

    // Backward view: d output / d attention probabilities beside the attention.
    function backwardView() {
      var back = carried("backward", data.backward_why || "No backward view in this page: it needs " +
        "an output to explain (a [MASK] in the text, or a sentence pair) and a BERT with its pretraining heads.");
      if (!back) return;
      note("Output explained: " + back.label + " = " + back.value + ". Left: where each query looks (the " +
        "attention). Right: how much that output would rise (red) or fall (blue) if one attention weight grew, " +
        "computed by the hand-written backward. Below: gradient \u00d7 input, the same output's sensitivity " +
        "to each input token's embedding times that embedding. Choose the layer and head above.");
      var side = el("div", {"class": "mbx-side"}, panel);
      var attention = matrix(data.attentions, [state.layer, state.head]);
      var gradient = matrix(back.gradients, [state.layer, state.head]);
      heatmap(side, attention, data.tokens, {title: "attention, layer " + state.layer + " \u00b7 head " + state.head, decimals: decimals, size: 300});
      heatmap(side, gradient, data.tokens, {title: "d output / d attention (red +, blue \u2212)", diverging: true, size: 300});
      var scores = back.gradient_x_input, T = scores.length, width = Math.max(20, Math.min(40, Math.floor(900 / T)));
      var top = maxAbs([scores]) || 1;
      var svg = svgEl("svg", {"class": "mbx-gxi", width: T * width + 20, height: 200}, panel);
      svgEl("text", {x: 4, y: 14, "font-size": 12}, svg, "gradient \u00d7 input per token");
      scores.forEach(function (v, j) {
        var h = 50 * Math.abs(v) / top, y = v >= 0 ? 80 - h : 80;
        svgEl("rect", {x: 10 + j * width, y: y, width: width - 4, height: h, fill: v >= 0 ? "#c0392b" : "#2e6fba"}, svg);
        svgEl("text", {transform: "translate(" + (14 + j * width) + ",140) rotate(60)", "font-size": 10}, svg, data.tokens[j]);
      });
    }

    function aggregateView() {
      var shown = display(source(state.layer, state.head), data, state);
      heatmap(panel, shown.m, shown.labels, {title: sourceName(), decimals: decimals});
      note("Choose what to show above (a head, the mean over heads or over everything, rollout). " +
        "Select tokens in the head view to sum their attention.");
      selectionBars(shown);
    }

    function timelineView() {
      var timeline = data.timeline;
      if (!timeline && data.history) { historyView(data.history); return; }
      timeline = carried("timeline", "No training timeline in this page: record one with " +
        "`minibert pretrain --snapshot-every K` and pass the folder (explore --timeline).");
      if (!timeline) return;
      var steps = timeline.steps;
      state.step = Math.min(state.step, steps.length - 1);
      var line = el("div", {"class": "mbx-bar"}, panel);
      var label = el("label", {}, line, "Training step ");
      var slider = el("input", {type: "range", name: "step", min: 0, max: steps.length - 1, value: state.step}, label);
      var shownStep = el("span", {"class": "mbx-step"}, line, "step " + steps[state.step]);
      var figure = el("div", {}, panel);
      function draw() {
        figure.textContent = "";
        var m = matrix(timeline.attentions, [state.step, state.layer, state.head]);
        heatmap(figure, m, timeline.tokens, {title: "step " + steps[state.step] + ": layer " + state.layer +
          " \u00b7 head " + state.head, decimals: decimals});
        var jobs = timeline.jobs[state.step];
        el("p", {"class": "mbx-note"}, figure, Object.keys(jobs).map(function (job) {
          var v = jobs[job][state.layer][state.head];
          return job + " " + (v < 0 ? "\u2013" : v.toFixed(2));
        }).join(" \u00b7 "));
      }
      slider.addEventListener("input", function () {
        state.step = +slider.value;
        shownStep.textContent = "step " + steps[state.step];
        draw();
      });
      draw();
    }

    // The model's training record (history.json): its held-out accuracies by step.
    function historyView(history) {
      note("How this model learned: held-out accuracy by training step, from its own history.json. " +
        "(Attention at each step needs snapshots: minibert pretrain --snapshot-every K, then explore --timeline.)");
      var steps = history.steps, names = Object.keys(history.series);
      var W = 640, H = 300, x0 = 56, y0 = 20, w = W - x0 - 20, h = H - y0 - 50;
      var last = steps[steps.length - 1] || 1;
      var svg = svgEl("svg", {"class": "mbx-figure mbx-history", width: W, height: H + 24 * names.length,
        viewBox: "0 0 " + W + " " + (H + 24 * names.length)}, panel);
      var colors = ["#0072b2", "#b34700"];
      [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
        var y = y0 + h * (1 - v);
        svgEl("line", {x1: x0, x2: x0 + w, y1: y, y2: y, stroke: "#ccc"}, svg);
        svgEl("text", {x: x0 - 6, y: y + 4, "text-anchor": "end", "font-size": 12, fill: "#222"}, svg, v.toFixed(2));
      });
      [0, 0.5, 1].forEach(function (f) {
        svgEl("text", {x: x0 + w * f, y: y0 + h + 18, "text-anchor": "middle", "font-size": 12, fill: "#222"}, svg,
          String(Math.round(last * f)));
      });
      svgEl("text", {x: x0 + w / 2, y: y0 + h + 36, "text-anchor": "middle", "font-size": 12, fill: "#222"}, svg, "training step");
      names.forEach(function (name, k) {
        var values = history.series[name];
        var points = values.map(function (v, i) {
          return (x0 + w * steps[i] / last).toFixed(1) + "," + (y0 + h * (1 - v)).toFixed(1);
        }).join(" ");
        svgEl("polyline", {points: points, fill: "none", stroke: colors[k % 2], "stroke-width": 2.5}, svg);
        var y = H + 24 * k + 10;
        svgEl("line", {x1: x0, x2: x0 + 24, y1: y - 4, y2: y - 4, stroke: colors[k % 2], "stroke-width": 3}, svg);
        svgEl("text", {x: x0 + 30, y: y, "font-size": 13, fill: "#222"}, svg, name + ": " +
          values[0].toFixed(2) + " at step " + steps[0] + ", " + values[values.length - 1].toFixed(2) +
          " at step " + last);
      });
    }

    function syncSelectors() {
      bar.querySelector("select[name=layer]").value = String(state.layer);
      bar.querySelector("select[name=head]").value = String(state.head);
    }

    function render() {
      Object.keys(buttons).forEach(function (v) { buttons[v].className = v === state.view ? "mbx-on" : ""; });
      panel.textContent = "";
      panel.setAttribute("data-view", state.view);
      ({head: headView, model: modelView, neuron: neuronView, backward: backwardView,
        aggregate: aggregateView, timeline: timelineView})[state.view]();
      fitToWindow();
    }

    // Every figure scales with the window, up to MAX_ZOOM times its drawn size: on a
    // projector at full screen the page needs no browser zoom. The drawn size stays in the
    // width and height attributes, which the downloads use.
    var MAX_ZOOM = 2.2;
    function fitToWindow() {
      Array.prototype.forEach.call(panel.querySelectorAll("svg"), function (svg) {
        var width = +svg.getAttribute("width"), height = +svg.getAttribute("height");
        if (!width || !height) return;
        svg.setAttribute("viewBox", "0 0 " + width + " " + height);
        svg.style.width = "100%";
        svg.style.maxWidth = Math.round(MAX_ZOOM * width) + "px";
        svg.style.height = "auto";
      });
    }

    function currentFigure() { return panel.querySelector("svg.mbx-figure"); }

    function serialized(svg) {
      var copy = svg.cloneNode(true);
      copy.setAttribute("style", "background:#fff");
      copy.setAttribute("font-family", "system-ui, sans-serif");  // the page's CSS stays behind
      return new XMLSerializer().serializeToString(copy);
    }

    function download(blob, name) {
      var link = el("a", {download: name}, null);
      link.href = URL.createObjectURL(blob);
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
    }

    function fileName(suffix) { return "minibert-" + state.view + "-" + state.layer + "-" + state.head + suffix; }

    function noFigure() { note("This view has no figure to download yet (click a thumbnail to enlarge it)."); }

    svgButton.addEventListener("click", function () {
      var svg = currentFigure();
      if (!svg) return noFigure();
      download(new Blob([serialized(svg)], {type: "image/svg+xml"}), fileName(".svg"));
    });
    pngButton.addEventListener("click", function () {
      var svg = currentFigure();
      if (!svg) return noFigure();
      var image = new Image(), width = +svg.getAttribute("width"), height = +svg.getAttribute("height");
      image.onload = function () {
        var canvas = el("canvas", {width: 2 * width, height: 2 * height}, null);
        var context = canvas.getContext("2d");
        context.fillStyle = "#fff";
        context.fillRect(0, 0, canvas.width, canvas.height);
        context.drawImage(image, 0, 0, canvas.width, canvas.height);
        canvas.toBlob(function (blob) { download(blob, fileName(".png")); });
      };
      image.src = "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(serialized(svg))));
    });

    render();
    root.setAttribute("data-ready", "1");
  }

  return function (rootId, dataId) {
    if (!document.getElementById("mbx-style")) {
      el("style", {id: "mbx-style"}, document.head || document.body, CSS);
    }
    var root = document.getElementById(rootId);
    var data = JSON.parse(document.getElementById(dataId).textContent);
    if (typeof DecompressionStream === "undefined") {
      root.textContent = "minibert explorer: this browser lacks DecompressionStream (2023 or later needed).";
      return;
    }
    unpackAll(data).then(function () { build(root, data); }, function (error) {
      root.textContent = "minibert explorer: the page's data could not be read (" + error.message + ")";
    });
  };
})();
