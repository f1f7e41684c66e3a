# Notebook 08, exercise 2: a chat that breaks NaiveMemory(6), and the stepper on the step where it breaks.
# Checked by: lesson_lib.exercises.nb08.check_breaking_point(my_stepper)
from lesson_lib.app import chat_app
from lesson_lib.stepper import StepperState

my_app = chat_app(strategy="NaiveMemory", budget=6)
for text in ["My name is Xiaoming.",
             "Which is warmer, Shanghai or Beijing?",  # two tool calls at once
             "What is my name?",                       # the trim drops the call, not its results
             "Hello"]:                                 # a request the API would refuse
    my_app.state.send(text)

my_stepper = StepperState(my_app)  # what stepper(my_app) shows, without the buttons
while not my_stepper.frame.problems and my_stepper.step < my_stepper.total:
    my_stepper.next()  # Next ▶, until the banner turns red for the first time
