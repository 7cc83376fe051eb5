(function () {
  "use strict";
  var buttons = document.querySelectorAll(".filters button");
  var docs = document.querySelectorAll("article.doc");
  buttons.forEach(function (b) {
    b.addEventListener("click", function () {
      var want = b.getAttribute("data-status");
      buttons.forEach(function (x) { x.classList.toggle("on", x === b); });
      docs.forEach(function (d) {
        d.classList.toggle("hidden", want !== "all" && d.getAttribute("data-status") !== want);
      });
    });
  });
})();
