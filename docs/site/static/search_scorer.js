/* The site's search ranking (html_search_scorer): Sphinx's default weights, except that a
 * heading containing the whole query comes first and an API name after the pages that
 * explain it, so "layernorm backward" finds the derivation before the attribute. */
function mbQueryWords() {
  var query = new URLSearchParams(window.location.search).get("q") || "";
  return query.toLowerCase().split(/[^a-z0-9]+/).filter(function (w) { return w.length > 1; });
}

var Scorer = {
  score: function (result) {
    var docname = result[0], title = (result[1] || "").toLowerCase();
    var score = result[4], kind = result[6];
    if (kind === "title") { return score + 30; }
    if (kind === "object") { return score - 30; }
    if (docname.indexOf("api/") === 0 || docname.indexOf("_modules/") === 0) {
      return score - 10;
    }
    // a page whose own title names a word of the query is about it
    mbQueryWords().forEach(function (word) {
      if (title.indexOf(word) >= 0) { score += 5; }
    });
    return score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
