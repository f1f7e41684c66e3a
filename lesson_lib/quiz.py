"""Check yourself: the short quiz that ends a section, with an explanation for every answer.

A notebook section ends with one cell,

    from lesson_lib.quiz import quiz
    quiz("04.2")

and the learner answers two or three questions by clicking; each choice, right or wrong,
says why. The questions live in `lesson_lib/data/quizzes/NN.json` (one file a notebook),
each text in English and Chinese side by side, so both editions run the same cell and each
speaks its own language (lesson_lib.i18n). A quiz is a check on the reader, not a grade:
nothing is recorded, and a learner may try every answer.

The file's shape (a test holds every file to it, `check_quizzes()`):

    {"04.2": {"title": {"en": "...", "zh": "..."},
              "questions": [{"ask": {"en": "...", "zh": "..."},
                             "options": [{"text": {...}, "right": true, "why": {...}},
                                         {"text": {...}, "why": {...}}]}]}}

A quiz has 1 to 4 questions; a question 2 to 5 options, exactly one of them right, and
every option an explanation in both languages. The quiz's id starts with its notebook's
number. Where the widget cannot be drawn (a saved notebook on the web, nbval), its text is
the questions and their options without the answers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lesson_lib.i18n import LANGUAGES, _, language

QUIZ_DIR = Path(__file__).parent / "data" / "quizzes"
LETTERS = "ABCDE"
MAX_QUESTIONS, MIN_OPTIONS, MAX_OPTIONS = 4, 2, 5
QUIZ_ID = re.compile(r"^(?P<notebook>\d\d[a-z]?)\.(?P<n>\d+)$")


class QuizError(ValueError):
    """A quiz that is missing or malformed: the message names the quiz and the fix."""


@dataclass(frozen=True)
class Option:
    text: dict[str, str]
    why: dict[str, str]
    right: bool = False


@dataclass(frozen=True)
class Question:
    ask: dict[str, str]
    options: tuple[Option, ...]

    @property
    def answer(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.right)


@dataclass(frozen=True)
class Quiz:
    id: str
    title: dict[str, str]
    questions: tuple[Question, ...]


def _texts(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or set(value) != set(LANGUAGES) or not all(
            isinstance(value[lang], str) and value[lang].strip() for lang in LANGUAGES):
        raise QuizError(f"{where}: give the text in both languages, "
                        f'{{"en": "...", "zh": "..."}}, neither empty')
    return {lang: value[lang].strip() for lang in LANGUAGES}


def parse(quiz_id: str, raw: Any, notebook: str | None = None) -> Quiz:
    """One quiz from its JSON object; QuizError naming the quiz, the place and the rule."""
    found = QUIZ_ID.match(quiz_id)
    if not found:
        raise QuizError(f"quiz {quiz_id!r}: an id is the notebook's number, a dot and the "
                        "section's number, like '04.2'")
    if notebook is not None and found["notebook"] != notebook:
        raise QuizError(f"quiz {quiz_id!r} is in {notebook}.json: a quiz goes in the file "
                        f"of its notebook, {found['notebook']}.json")
    if not isinstance(raw, dict) or set(raw) - {"title", "questions"}:
        raise QuizError(f"quiz {quiz_id!r}: a quiz has a 'title' and 'questions', nothing else")
    title = _texts(raw.get("title"), f"quiz {quiz_id!r}, its title")
    questions = raw.get("questions")
    if not isinstance(questions, list) or not 1 <= len(questions) <= MAX_QUESTIONS:
        raise QuizError(f"quiz {quiz_id!r}: give 1 to {MAX_QUESTIONS} questions; a section's "
                        "quiz is short")
    parsed = []
    for q, question in enumerate(questions, 1):
        where = f"quiz {quiz_id!r}, question {q}"
        if not isinstance(question, dict) or set(question) != {"ask", "options"}:
            raise QuizError(f"{where}: a question has an 'ask' and its 'options'")
        options = question["options"]
        if not isinstance(options, list) or not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
            raise QuizError(f"{where}: give {MIN_OPTIONS} to {MAX_OPTIONS} options")
        made = []
        for o, option in enumerate(options):
            at = f"{where}, option {LETTERS[o]}"
            if not isinstance(option, dict) or set(option) - {"text", "why", "right"}:
                raise QuizError(f"{at}: an option has a 'text', a 'why' and perhaps "
                                "'right': true")
            if option.get("right", False) not in (True, False):
                raise QuizError(f"{at}: 'right' is true or false")
            made.append(Option(_texts(option.get("text"), f"{at}, its text"),
                               _texts(option.get("why"), f"{at}, its explanation ('why')"),
                               bool(option.get("right", False))))
        rights = sum(option.right for option in made)
        if rights != 1:
            raise QuizError(f"{where}: exactly one option is right (this one has {rights}); "
                            'mark it "right": true')
        for lang in LANGUAGES:
            seen = [option.text[lang] for option in made]
            if len(set(seen)) != len(seen):
                raise QuizError(f"{where}: two options read the same in {lang!r}")
        parsed.append(Question(_texts(question["ask"], f"{where}, its 'ask'"), tuple(made)))
    return Quiz(quiz_id, title, tuple(parsed))


@cache
def _file(notebook: str) -> dict[str, Quiz]:
    path = QUIZ_DIR / f"{notebook}.json"
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise QuizError(f"{path.name} is not valid JSON (line {error.lineno}, column "
                        f"{error.colno}): {error.msg}") from None
    if not isinstance(raw, dict):
        raise QuizError(f"{path.name}: the file is one object, quiz id → quiz")
    return {quiz_id: parse(quiz_id, quiz, notebook) for quiz_id, quiz in raw.items()}


def load(quiz_id: str) -> Quiz:
    """The quiz called `quiz_id` ("04.2"); QuizError saying which ids exist when it does not."""
    found = QUIZ_ID.match(str(quiz_id))
    if not found:
        raise QuizError(f"quiz {quiz_id!r}: an id is the notebook's number, a dot and the "
                        "section's number, like '04.2'")
    quizzes = _file(found["notebook"])
    if quiz_id not in quizzes:
        known = ", ".join(sorted(quizzes)) or "none"
        raise QuizError(f"there is no quiz {quiz_id!r} (notebook {found['notebook']} has: "
                        f"{known})")
    return quizzes[quiz_id]


def check_quizzes() -> dict[str, Quiz]:
    """Every quiz of every file, each checked: the id → its quiz (QuizError at the first
    fault)."""
    everything: dict[str, Quiz] = {}
    for path in sorted(QUIZ_DIR.glob("*.json")):
        _file.cache_clear()
        everything.update(_file(path.stem))
    return everything


@dataclass(frozen=True)
class Feedback:
    right: bool
    chosen: str   # the option's letter
    why: str      # the explanation, in the language spoken now

    def text(self) -> str:
        verdict = _("✓ Right.") if self.right else _("✗ Not this one.")
        return _("{letter}: {verdict} {why}").format(letter=self.chosen, verdict=verdict,
                                                    why=self.why)


class QuizState:
    """A quiz being answered: plain Python, so the widget's behaviour is tested without a
    front end. `choose(q, o)` answers question q (from 0) with option o (from 0, or its
    letter) and returns the feedback; a learner may choose again."""

    def __init__(self, quiz: Quiz | str):
        self.quiz = load(quiz) if isinstance(quiz, str) else quiz
        self.lang = language()
        self.chosen: list[int | None] = [None] * len(self.quiz.questions)

    def choose(self, question: int, option: int | str) -> Feedback:
        if not 0 <= question < len(self.quiz.questions):
            raise IndexError(f"quiz {self.quiz.id} has questions 0 to "
                             f"{len(self.quiz.questions) - 1}, not {question}")
        options = self.quiz.questions[question].options
        if isinstance(option, str):
            option = LETTERS.index(option.upper()) if option.upper() in LETTERS else -1
        if not 0 <= option < len(options):
            raise IndexError(f"question {question} of quiz {self.quiz.id} has options "
                             f"{LETTERS[0]} to {LETTERS[len(options) - 1]}")
        self.chosen[question] = option
        picked = options[option]
        return Feedback(picked.right, LETTERS[option], picked.why[self.lang])

    @property
    def right(self) -> int:
        return sum(chosen is not None and q.options[chosen].right
                   for q, chosen in zip(self.quiz.questions, self.chosen, strict=True))

    def summary(self) -> str:
        n = len(self.quiz.questions)
        return _("check yourself {id}: {right} of {n} right").format(
            id=self.quiz.id, right=self.right, n=n)

    def text(self) -> str:
        """The quiz as text, without its answers: what a saved notebook shows."""
        lang = self.lang
        lines = [_("Check yourself ({id}): {title}").format(
            id=self.quiz.id, title=self.quiz.title[lang])]
        for q, question in enumerate(self.quiz.questions, 1):
            lines.append(f"{q}. {question.ask[lang]}")
            lines += [f"   {LETTERS[o]}) {option.text[lang]}"
                      for o, option in enumerate(question.options)]
        lines.append(_("(Open the notebook in JupyterLab and click an answer to see why.)"))
        return "\n".join(lines)


def _code(text: str) -> str:
    """A quiz's text as HTML: escaped, with `x` shown as code (its only mark-up)."""
    import html  # noqa: PLC0415

    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


class QuizView:
    """The quiz's widgets: for each question its text, a lettered button beside each option,
    and a line that says whether the choice is right and why."""

    def __init__(self, state: QuizState):
        import ipywidgets as w  # noqa: PLC0415  (lazy: widgets only when a quiz is shown)

        self.state = state
        lang = state.lang
        self.buttons: list[list[Any]] = []
        self.feedback: list[Any] = []
        head = _("Check yourself ({id}): {title}").format(id=state.quiz.id,
                                                           title=state.quiz.title[lang])
        rows: list[Any] = [w.HTML(f"<b>{_code(head)}</b>")]
        for q, question in enumerate(state.quiz.questions):
            rows.append(w.HTML(f"<div style='margin-top:8px'><b>{q + 1}.</b> "
                               f"{_code(question.ask[lang])}</div>"))
            buttons = []
            for o, option in enumerate(question.options):
                button = w.Button(description=LETTERS[o], layout=w.Layout(width="44px"))
                button.add_class("lesson-quiz-option")  # a handle for browser tests
                button.on_click(lambda _b, q=q, o=o: self.choose(q, o))
                buttons.append(button)
                rows.append(w.HBox([button, w.HTML(_code(option.text[lang]))]))
            feedback = w.HTML()
            feedback.add_class("lesson-quiz-feedback")
            self.buttons.append(buttons)
            self.feedback.append(feedback)
            rows.append(feedback)
        self.root = w.VBox(rows)
        self.root.add_class("lesson-quiz")

    def choose(self, question: int, option: int) -> Feedback:
        result = self.state.choose(question, option)
        for o, button in enumerate(self.buttons[question]):
            button.button_style = ("" if o != option else
                                   "success" if result.right else "danger")
        colour = "#15803d" if result.right else "#b91c1c"
        self.feedback[question].value = (f"<div style='color:{colour};margin:2px 0 6px'>"
                                         f"{_code(result.text())}</div>")
        return result

    def __repr__(self) -> str:
        return self.state.text()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = self.root._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return bundle


def quiz(quiz_id: str) -> QuizView:
    """The section's check-yourself quiz `quiz_id` ("04.2"), as a widget to click."""
    return QuizView(QuizState(quiz_id))
