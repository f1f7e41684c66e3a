# Notebook 00, exercise 1: a first history by hand, the user says their name and is greeted by it.
# Checked by: lesson_lib.exercises.nb00.check_first_history(my_history)

# Two plain dicts, oldest first. The roles are the API's own words: "user" for the person,
# "assistant" for the model (not "bot"), and the greeting uses the name the user gave.
my_history = [
    {"role": "user", "content": "My name is Xiaoming."},
    {"role": "assistant", "content": "Nice to meet you, Xiaoming!"},
]
