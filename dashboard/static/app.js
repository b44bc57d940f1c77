// Engram dashboard: draws the episodes-per-day chart and the graph from JSON the page carries.
// Plain SVG, no library, no network. The same file runs inside AstrBot's WebUI, where the view
// (views/engram/engram.js) calls EngramDraw() after each page it shows.
"use strict";
(function () {
  var NS = "http://www.w3.org/2000/svg";
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function readData(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function drawChart(svg, days) {
    var w = svg.clientWidth || 800, h = svg.clientHeight || 180, pad = 24;
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    if (!days.length) { el("text", {x: 10, y: 20}, svg).textContent = "—"; return; }
    var max = Math.max.apply(null, days.map(function (d) { return d[1]; }));
    var bw = (w - pad) / days.length;
    days.forEach(function (d, i) {
      var bh = Math.max(1, (h - pad) * d[1] / max);
      var r = el("rect", {x: pad + i * bw + 1, y: h - pad - bh, width: Math.max(1, bw - 2), height: bh,
                          "data-day": d[0], "data-n": d[1]}, svg);
      el("title", {}, r).textContent = d[0] + ": " + d[1];
    });
    el("text", {x: 2, y: 10}, svg).textContent = String(max);
    el("text", {x: pad, y: h - 6}, svg).textContent = days[0][0];
    el("text", {x: w - 70, y: h - 6}, svg).textContent = days[days.length - 1][0];
  }

  function drawGraph(svg, data, hint) {
    var w = svg.clientWidth || 900, h = svg.clientHeight || 560;
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    var nodes = data.nodes.map(function (n, i) {
      var a = 2 * Math.PI * i / Math.max(1, data.nodes.length);
      return {id: n.id, type: n.type, label: n.label, focus: !!n.focus,
              x: w / 2 + Math.cos(a) * w / 3, y: h / 2 + Math.sin(a) * h / 3,
              vx: 0, vy: 0};
    });
    var byId = {};
    nodes.forEach(function (n) { byId[n.id] = n; });
    var links = data.links.filter(function (l) { return byId[l.source] && byId[l.target]; });
    // Fruchterman-Reingold: every pair repels (k²/d), linked nodes attract (d²/k), moves cool down.
    var k = 0.4 * Math.sqrt(w * h / Math.max(1, nodes.length)), t = w / 8;
    for (var step = 0; step < 250; step++) {
      nodes.forEach(function (n) { n.vx = 0; n.vy = 0; });
      for (var i = 0; i < nodes.length; i++) {
        for (var j = i + 1; j < nodes.length; j++) {
          var a = nodes[i], b = nodes[j], dx = a.x - b.x, dy = a.y - b.y;
          var d = Math.sqrt(dx * dx + dy * dy) || 0.01, f = k * k / d / d;
          a.vx += dx * f; a.vy += dy * f; b.vx -= dx * f; b.vy -= dy * f;
        }
      }
      links.forEach(function (l) {
        var a = byId[l.source], b = byId[l.target], dx = a.x - b.x, dy = a.y - b.y;
        var d = Math.sqrt(dx * dx + dy * dy) || 0.01, f = d / k;
        a.vx -= dx * f; a.vy -= dy * f; b.vx += dx * f; b.vy += dy * f;
      });
      nodes.forEach(function (n) {
        n.vx += (w / 2 - n.x) * 0.05; n.vy += (h / 2 - n.y) * 0.05;  // gravity keeps islands in view
        var d = Math.sqrt(n.vx * n.vx + n.vy * n.vy) || 0.01, m = Math.min(d, t) / d;
        n.x = Math.min(w - 60, Math.max(20, n.x + n.vx * m));
        n.y = Math.min(h - 20, Math.max(20, n.y + n.vy * m));
      });
      t *= 0.98;
    }
    links.forEach(function (l) {
      var a = byId[l.source], b = byId[l.target];
      el("line", {x1: a.x, y1: a.y, x2: b.x, y2: b.y, "class": l.type,
                  "stroke-width": l.type === "talks" ? Math.min(6, 1 + Math.log(1 + l.weight)) : 1}, svg);
    });
    nodes.forEach(function (n) {
      // each node is a link: a person narrows the graph to them, a memory opens its page
      var href = n.type === "person" ? "/graph?person=" + encodeURIComponent(n.id)
                                     : "/memories/" + n.id.slice(1);
      var a = el("a", {href: href, "class": n.type + (n.focus ? " focus" : "")}, svg);
      var shape = n.type === "person"
        ? el("circle", {cx: n.x, cy: n.y, r: n.focus ? 12 : 9, "data-id": n.id}, a)
        : el("rect", {x: n.x - 5, y: n.y - 5, width: 10, height: 10, "data-id": n.id}, a);
      el("title", {}, shape).textContent = n.label;
      shape.addEventListener("mouseenter", function () { hint.textContent = n.label; });
      var text = n.type === "person" ? n.label : (n.label.length > 14 ? n.label.slice(0, 13) + "…" : n.label);
      el("text", {x: n.x + (n.type === "person" ? 12 : 8), y: n.y + 4, "class": n.type}, a).textContent = text;
    });
  }

  function draw() {
    var chart = document.getElementById("chart");
    if (chart) drawChart(chart, readData("chart-data") || []);
    var graph = document.getElementById("graph");
    if (graph) drawGraph(graph, readData("graph-data") || {nodes: [], links: []},
                         document.getElementById("graph-label"));
  }
  window.EngramDraw = draw;
  draw();
})();
