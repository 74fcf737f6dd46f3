# system-deps.mk: what grading needs from the system, installed with apt-get when run as root, else said.
# Included by the repository's Makefile and by the student repository's (grader/course/student_files/).
# The CPU runtime for CUDA kernels (csrc/cuda_cpu) needs a C++20 compiler and Boost.Context.
BOOST_CONTEXT := /usr/include/boost/context/fiber.hpp
# Pictures in Chinese or Japanese need a font with their glyphs (grader/report/fonts.py)
CJK_FONT := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
# Workers run in bubblewrap boxes (grader/sandbox/bubblewrap.py); without bwrap grading falls back to a reduced
# fence and says so.
system-deps:
	@test -f $(BOOST_CONTEXT) || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libboost-context-dev g++; \
	  else echo "Boost.Context is missing: run 'sudo apt-get install libboost-context-dev g++'" >&2; exit 1; fi; }
	@test -f $(CJK_FONT) || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq fonts-wqy-microhei; \
	  else echo "no CJK font (pictures in Chinese or Japanese are drawn in English): run 'sudo apt-get install fonts-wqy-microhei'" >&2; fi; }
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else echo "bubblewrap is missing (grading works, with reduced isolation): run 'sudo apt-get install bubblewrap'" >&2; fi; }
