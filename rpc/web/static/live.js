// lazy web: hear of each change to the store (server-sent events from /events), say what
// changed in the banner, and fetch this page again to swap its content in, without a reload.
// The only script the Content-Security-Policy lets run; it never parses stored text as HTML
// (the banner is set with textContent, the fresh content comes from the server, escaped).
(function () {
  "use strict";
  var banner = document.getElementById("banner");
  var since = document.body.getAttribute("data-since") || "0";
  var waiting = null;

  function say(message) {
    banner.textContent = message;
    banner.hidden = false;
  }

  function typing() {
    var active = document.activeElement;
    return active && active.tagName === "INPUT" && active.type !== "radio";
  }

  function refresh(message) {
    if (typing()) {
      say(message + ". Reload the page to see it.");
      return;
    }
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var content = fresh.getElementById("content");
        var current = document.getElementById("content");
        if (content && current) {
          current.replaceWith(document.adoptNode(content));
          say(message + ". This page now shows it.");
        }
      })
      .catch(function () { say(message + ". Reload the page to see it."); });
  }

  function heard(event) {
    var message = JSON.parse(event.data).message;
    say(message + ".");
    clearTimeout(waiting);
    waiting = setTimeout(function () { refresh(message); }, 150);
  }

  var source = new EventSource("/events?since=" + encodeURIComponent(since));
  source.addEventListener("change", heard);
  source.addEventListener("reset", heard);
})();
