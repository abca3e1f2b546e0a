"""A ``--command`` as the shell will read it: whether it is one simple command naming a program, which ``exec`` can
put in the place of the shell that runs it."""

from __future__ import annotations

import re
import shlex

#: Words that begin no program ``exec`` could put in the shell's place: the reserved words, and the built-ins
#: that act on the shell itself (``exec cd x`` fails; ``time`` is a keyword in mksh and bash).
# fmt: off
SHELL_WORDS = frozenset({
    "!", "{", "}", "(", ")", "[[", "if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do",
    "done", "in", "function", "select", "time", ".", ":", "break", "continue", "eval", "exec", "exit", "export",
    "readonly", "return", "set", "shift", "times", "trap", "unset", "cd", "alias", "umask", "ulimit", "wait",
    "command", "builtin", "source", "local", "typeset",
})
# fmt: on
#: The redirection operators a simple command may carry (``exec`` applies them to the program).
REDIRECTIONS = frozenset({"<", ">", ">>", "<<", "<<-", ">&", "<&", "<>", ">|", "&>"})


def in_place(command: str) -> str | None:
    """``exec COMMAND`` where the command is one simple command naming a program, so that the process ``sh -c``
    starts is the program itself; None for anything else (a list, a pipeline, a ``cd``, an assignment first, a
    command substitution), which runs as its shell.

    Why: dash (``sh`` on Debian, Ubuntu, a Jetson's L4T, Raspberry Pi OS) forks even a lone command and waits for
    it, where mksh and busybox exec it; the process sensors then watched the waiting shell (tried: ``run --command
    ./bench.sh`` here stored 1.4 MiB peak memory and no CPU: the shell's)."""
    if "\n" in command or "`" in command or "$(" in command:
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: the shell will say so
        return None
    if not words or words[0] in SHELL_WORDS - {"exec"} or re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        return None
    if any(set(w) <= set("();<>|&") and w not in REDIRECTIONS for w in words):
        return None
    return command if words[0] == "exec" else f"exec {command}"
