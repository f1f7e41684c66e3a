# Notebook 06, exercise 1: predict how many model calls LoopAgent makes for each question.
# Checked by: lesson_lib.exercises.nb06.check_predictions(my_predictions)

# The rule of thumb: model calls = rounds of tool calls + 1 (the answer), capped at max_turns.
my_predictions = {
    "a": 1,  # "Hello!": no tool needed, the first reply is the answer
    "b": 2,  # four parallel calls share one round, then the answer
    "c": 3,  # a chain: the weather in both cities, then the time where it is colder, the answer
    "d": 2,  # Shanghai is sunny in the simulated data: one weather round ends it, then the answer
    "e": 4,  # Chengdu stays cloudy, so the model never stops: max_turns=4 calls, then the cap
}
