"""The class's feedback, split over --jobs nbgrader processes (grader/course/generate_feedback.py). The real
split run, with hidden tests removed and each student's feedback checked, is in test_class_nbgrader.py."""

from grader.course import generate_feedback


def test_the_ignore_list_is_nbgraders_own_and_the_grading_folder():
    from nbgrader.coursedir import CourseDirectory
    assert generate_feedback.NBGRADER_IGNORE == CourseDirectory().ignore
    assert generate_feedback.FEEDBACK_IGNORE == CourseDirectory().ignore + ["grading"]


def test_each_student_is_in_exactly_one_group():
    students = [f"s{i:02d}" for i in range(7)]
    for at_once in (1, 2, 3, 7, 12):
        dealt = generate_feedback.groups(students, at_once)
        assert len(dealt) == min(at_once, len(students)) and all(dealt)
        assert sorted(s for group in dealt for s in group) == students
    assert generate_feedback.groups(students, 2) == [students[0::2], students[1::2]]
    assert generate_feedback.groups([], 2) == []


def test_an_id_that_student_id_exclude_cannot_name_keeps_the_class_in_one_process():
    assert generate_feedback.groups(["a", "b,c", "d"], 2) == [["a", "b,c", "d"]]


def test_each_process_leaves_out_every_other_groups_students():
    students = ["ann", "bob", "cy", "dee"]
    for group in generate_feedback.groups(students, 2):
        others = [s for s in students if s not in group]
        cmd = generate_feedback.arguments("attention", others)
        assert f"--CourseDirectory.student_id_exclude={','.join(others)}" in cmd
        assert "--CourseDirectory.ignore=" + repr(generate_feedback.FEEDBACK_IGNORE) in cmd
    assert not any("student_id_exclude" in a for a in generate_feedback.arguments("attention", []))
