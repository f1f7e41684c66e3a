# Notebook 11, Build it: my_recall, the best memories as one labelled system message under a token budget
# Checked by: lesson_lib.exercises.nb11.check_my_recall(my_recall)
from lesson_lib.tokens import count_messages


def my_recall(question, memory, budget):
    """The memories that best answer `question`, as one system message of at most `budget`
    tokens, each line with its date and source; None when none fits."""
    def message(hits):
        lines = [f"- {hit.created_at[:10]} [{hit.source}] {hit.text}" for hit in hits]
        return {"role": "system",
                "content": "\n".join(["What you remember (the newer is right):", *lines])}

    kept = []
    for hit in memory.search(question, 5):           # best first
        if count_messages([message(kept + [hit])]) <= budget:
            kept.append(hit)                         # a hit that does not fit is skipped
    return message(kept) if kept else None
