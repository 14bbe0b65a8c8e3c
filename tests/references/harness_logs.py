"""Evaluation logs written by the harnesses themselves, for the readers' tests.

Never imitations of the formats: an Inspect AI ``eval()`` of a tiny task with the mock model
(its grader a second mock model answering "GRADE: C"/"GRADE: I"), written by Inspect's own log
writer; and a real lm-evaluation-harness run of a tiny local task with lm-eval's dummy model,
written by lm-eval's own ``EvaluationTracker``. Everything runs offline.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Item ids that look like numbers ("007" and 7 must stay two items), names with a newline and
# HTML: the readers keep them as they are.
INSPECT_IDS = ["007", 7, "a\nb", "<b>x</b>", 11, "12", "q-7", 8, "9", "x"]
EPOCHS = 3
MODEL = "mockllm/model"
# The question whose first epoch fails (the sample has no score): an unparsed verdict.
FAILING = "question 3"


def _grade(question: int, attempt: int) -> str:
    """The mock grader's verdict of one answer: a fixed, varied pattern of C and I."""
    return "C" if (3 * question + attempt) % 4 else "I"


def write_inspect_log(
    folder: Path,
    *,
    fail_one: bool = False,
    partial: bool = False,
    ids: list | None = None,
    epochs: int = EPOCHS,
) -> Path:
    """Run a tiny Inspect task (mock model, model-graded scorer + match, 3 epochs); its log.

    The evaluated mock model answers "answer to question i, try t" (t counts its calls per
    question); the grader mock reads that answer and replies "GRADE: C" or "GRADE: I" (and
    "GRADE: P" for question 2 with ``partial``). With ``fail_one``, the solver raises in the first
    epoch of question 3, so that sample has an error and no score (``fail_on_error=False``).
    """
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match, model_graded_qa
    from inspect_ai.solver import solver

    usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download

    def output(text: str) -> ModelOutput:
        out = ModelOutput.from_content(MODEL, text)
        out.usage = usage
        return out

    calls: dict[str, int] = {}

    def answer(messages, tools, tool_choice, config):
        question = messages[-1].text
        calls[question] = calls.get(question, 0) + 1
        return output(f"answer to {question}, try {calls[question]}")

    def grade(messages, tools, tool_choice, config):
        found = re.search(r"answer to question (\d+), try (\d+)", messages[-1].text)
        question, attempt = int(found[1]), int(found[2])
        letter = "P" if partial and question == 2 else _grade(question, attempt)
        return output(f"GRADE: {letter}")

    @solver
    def flaky():
        # A solver's error is not retried (a model's is, with back-off): the sample fails at once.
        async def solve(state, generate):
            if fail_one and state.input_text == FAILING and state.epoch == 1:
                raise RuntimeError("the solver failed on this sample")
            return await generate(state)

        return solve

    samples = [
        Sample(
            input=f"question {i}",
            target="a",
            id=sample_id,
            metadata={"kind": "short" if i % 2 else "long\n<i>html</i>", "item": "clash"},
        )
        for i, sample_id in enumerate(INSPECT_IDS if ids is None else ids)
    ]
    grader = get_model("mockllm/grader", custom_outputs=grade)
    task = Task(
        dataset=samples,
        solver=flaky(),
        scorer=[model_graded_qa(model=grader, partial_credit=partial), match()],
        epochs=epochs,
    )
    logs = eval(
        task,
        model=get_model(MODEL, custom_outputs=answer),
        log_dir=str(folder),
        display="none",
        log_format="eval",
        fail_on_error=False,
        max_samples=1,  # one sample at a time: the tries are numbered in epoch order
    )
    return Path(logs[0].location)


LM_TASK = """\
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{question}}}}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: label
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
"""
LM_DOCS = 40
LM_MODEL = "judge <b>x</b>"


def run_lm_eval(folder: Path) -> Path:
    """Run lm-eval's dummy model on a tiny local multiple-choice task; its sample file.

    lm-eval's own ``EvaluationTracker`` writes ``results_<date>.json`` (naming the model) and
    ``samples_tiny_<date>.jsonl`` into ``folder/<model>/``. Its dummy model returns random
    log-likelihoods (seeded by ``simple_evaluate``), so ``acc`` varies across documents.
    """
    import json

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["HF_DATASETS_CACHE"] = str(folder / "hf-cache")
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    tasks = folder / "tasks"
    tasks.mkdir()
    data = tasks / "docs.jsonl"
    docs = [
        {"question": f"question {i}\n<b>{i:03d}</b>", "choices": ["a", "b", "c"], "label": i % 3}
        for i in range(LM_DOCS)
    ]
    data.write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tasks / "tiny.yaml").write_text(LM_TASK.format(name="tiny", data=data))
    tracker = EvaluationTracker(output_path=str(folder / "out"))
    results = lm_eval.simple_evaluate(
        model="dummy",
        model_args=f"pretrained={LM_MODEL}",
        tasks=["tiny"],
        task_manager=TaskManager(include_path=str(tasks), include_defaults=False),
        log_samples=True,
        evaluation_tracker=tracker,
        random_seed=1,
    )
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples(task_name="tiny", samples=samples["tiny"])
    (path,) = (folder / "out").glob("*/samples_tiny_*.jsonl")
    return path
