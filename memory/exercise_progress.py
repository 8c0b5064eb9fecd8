"""A student's exercise results, kept in this browser's localStorage beside the rest of their work
(the same key prefix, so 「清除本页保存的内容」 clears them too), never on the server.

One key holds every lesson's: {exercise id: {"lesson", "passed", "tries", "first_passed", "last"}}.
Three small scripts use it: RECORD_JS adds a check's verdict, MARK_JS draws the row of ✓ on the lesson
list (each link says which exercises its lesson has), EXPORT_JS downloads the results as a JSON file
a teacher can collect (no account, no upload)."""
from __future__ import annotations

import json

from memory.memory_format import PREFIX

KEY = PREFIX + "exercises"
FILE_NAME = "exercise-results.json"

# window.twMarkExercises(): every lesson link with data-exercises="a,b" gets ✓ for each passed one and
# · for each not yet; the current page's choice list its ✓ too.
MARK_JS = """() => {
  window.twExerciseResults = () => {
    try { return JSON.parse(localStorage.getItem(%(key)s) || "{}") || {}; } catch (e) { return {}; }
  };
  window.twMarkExercises = () => {
    const results = window.twExerciseResults();
    for (const link of document.querySelectorAll("#lesson-nav a[data-exercises]")) {
      const ids = link.dataset.exercises.split(",").filter(Boolean);
      let mark = link.querySelector(".tw-exercise-marks");
      if (!mark) { mark = document.createElement("span"); mark.className = "tw-exercise-marks"; link.appendChild(mark); }
      mark.textContent = " " + ids.map((id) => (results[id] && results[id].passed_once) ? "✓" : "·").join("");
      mark.title = ids.filter((id) => results[id] && results[id].passed_once).length + "/" + ids.length;
    }
  };
  window.twMarkExercises();
}""" % {"key": json.dumps(KEY)}

# Called with the check's record (JSON text: {"exercise", "lesson", "passed"}); returns nothing.
RECORD_JS = """(record) => {
  if (!record) return;
  let one;
  try { one = JSON.parse(record); } catch (e) { return; }
  let results = {};
  try { results = JSON.parse(localStorage.getItem(%(key)s) || "{}") || {}; } catch (e) {}
  const now = new Date().toISOString(), old = results[one.exercise] || {tries: 0};
  results[one.exercise] = {lesson: one.lesson, passed: one.passed, passed_once: !!(old.passed_once || one.passed),
                           tries: (old.tries || 0) + 1, first_passed: old.first_passed || (one.passed ? now : null),
                           last: now};
  try { localStorage.setItem(%(key)s, JSON.stringify(results)); } catch (e) {}
  if (window.twMarkExercises) window.twMarkExercises();
}""" % {"key": json.dumps(KEY)}

# Called with the name the student typed; downloads the file.
EXPORT_JS = """(name) => {
  let results = {};
  try { results = JSON.parse(localStorage.getItem(%(key)s) || "{}") || {}; } catch (e) {}
  const file = {format: "tool-workshop-exercises/1", student: (name || "").slice(0, 100),
                exported_at: new Date().toISOString(), results: results};
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([JSON.stringify(file, null, 2)], {type: "application/json"}));
  link.download = %(file)s;
  document.body.appendChild(link);
  link.click();
  setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
  return [name];
}""" % {"key": json.dumps(KEY), "file": json.dumps(FILE_NAME)}
