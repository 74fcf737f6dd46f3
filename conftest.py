# Loads the grading fixtures and markers for every suite under tests/.
pytest_plugins = ("grader.suite.plugin",)
