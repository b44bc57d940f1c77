// Engram inside AstrBot's WebUI. The pages are the standalone dashboard's (made by the plugin, in
// dashboard/pages.py); this script only asks for them through AstrBot's bridge (its login, its
// token), shows them and keeps every link and form inside this frame. It writes nothing anywhere.
// The page shown is kept in the frame's own address (#%2Fmemories%3Fpage%3D2), so the browser's back
// and forward buttons step through the pages seen, as they do on the standalone dashboard.
"use strict";
(function () {
  var view = window.AstrBotPluginView;
  var root = document.getElementById("engram");
  var lang = "";

  // "/memories/12?x=1#e3" -> the plugin's route ("memory/12") and its query
  function route(url) {
    var u = new URL(url, "http://engram.invalid");
    var params = {};
    u.searchParams.forEach(function (v, k) { params[k] = v; });
    if (lang) params.lang = lang;
    var m = u.pathname.match(/^\/memories\/([^/]+)$/);
    var name = m ? "memory/" + encodeURIComponent(decodeURIComponent(m[1]))
                 : (u.pathname === "/" ? "overview" : u.pathname.slice(1));
    return {endpoint: name, params: params, hash: u.hash.slice(1)};
  }

  function say(message) {
    var p = document.createElement("p");
    p.className = "error";
    p.textContent = message;
    var main = root.querySelector("main");  // the pages' links stay above the error
    if (main) main.replaceChildren(p); else root.replaceChildren(p);
  }

  async function show(url) {
    var r = route(url);
    var d;
    root.setAttribute("aria-busy", "true");
    try {
      d = await view.apiGet(r.endpoint, r.params);
    } catch (e) {
      root.removeAttribute("aria-busy");
      say(e && e.message ? e.message : String(e));
      return;
    }
    // the page arrives as a whole document (every value escaped by the plugin); its parts are
    // taken over as nodes: a script in it never runs (the chart's data is inert JSON)
    var doc = new DOMParser().parseFromString(d.html, "text/html");
    document.title = doc.title;
    document.documentElement.lang = doc.documentElement.lang || "";
    var parts = ["header", "main", "footer"].map(function (tag) {
      var n = doc.querySelector("body > " + tag);
      return n ? document.importNode(n, true) : null;
    }).filter(Boolean);
    root.replaceChildren.apply(root, parts);
    root.setAttribute("data-page", d.page);
    root.removeAttribute("aria-busy");
    if (window.EngramDraw) window.EngramDraw();
    var target = r.hash && document.getElementById(r.hash);
    if (target) target.scrollIntoView(); else window.scrollTo(0, 0);
  }

  // the page this frame's address names ("/" when it names none)
  function current() {
    var url = "";
    try { url = decodeURIComponent(location.hash.slice(1)); } catch (e) { url = ""; }
    return url.charAt(0) === "/" ? url : "/";
  }

  // a new page: a new entry in the browser's history (its hashchange shows it)
  function go(url) {
    var next = "#" + encodeURIComponent(url);
    if (location.hash === next) { show(url); return; }  // the same page again: asked for afresh
    try { location.hash = next; } catch (e) { show(url); }
  }

  window.addEventListener("hashchange", function () { show(current()); });

  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a") : null;
    var href = a && a.getAttribute("href");
    if (!href || href.charAt(0) !== "/") return;  // only the pages' own links
    e.preventDefault();
    go(href);
  });

  document.addEventListener("submit", function (e) {
    var form = e.target;
    e.preventDefault();
    var query = new URLSearchParams(new FormData(form)).toString();
    go((form.getAttribute("action") || "/") + (query ? "?" + query : ""));
  });

  async function start(context) {
    lang = (context && context.locale) || "";
    try {
      var css = await view.apiGet("static/style.css", {});
      var style = document.createElement("style");
      style.textContent = css.text;
      document.head.appendChild(style);
      var js = await view.apiGet("static/app.js", {});
      var script = document.createElement("script");
      script.textContent = js.text;  // the chart and the graph, the standalone dashboard's own code
      document.head.appendChild(script);
    } catch (e) {
      say(e && e.message ? e.message : String(e));
      return;
    }
    window.EngramShow = go;  // for a test or the console: EngramShow("/memories?q=…")
    show(current());  // the page the address names: a reload of the frame stays where it was
  }

  if (!view) {
    say(/^zh/i.test(navigator.language || "") ? "缺少 AstrBot 的插件桥接脚本：请在 AstrBot 的 WebUI 中打开此页面。"
        : "AstrBot's plugin bridge is missing: open this page from AstrBot's WebUI.");
    return;
  }
  view.ready().then(start);
})();
