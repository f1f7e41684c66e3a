# Notebook 01, exercise 2: true or false, six statements about a stateless model.
# Checked by: lesson_lib.exercises.nb01.check_answers(my_answers)

my_answers = {
    "A": False,  # nothing is kept between calls: "What's my name?" sent alone got no name
    "B": True,   # memory is what you send: the question sent with the history got the name back
    "C": False,  # every call is a first meeting: the model knows its replies only if they are sent
    "D": True,   # the offline model's reply, id included, is computed from the request alone
    "E": True,   # each call re-sends the whole history, so each request is bigger than the last
    "F": False,  # the forgetful call was one short message: the first line simply was not sent
}
