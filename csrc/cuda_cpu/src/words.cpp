// words.cpp: the runtime's messages in the student's language. said() writes a message as
//   "\x02" FORMAT "\x1f" ARG1 "\x1f" ARG2 ... "\x03"
// the printf format as this file's caller wrote it, in English (a message of the grader's catalogs: `make messages`
// extracts every said() and saying() format under csrc/cuda_cpu), and each argument already formatted. The grader
// renders it in the grading's language (grader/sandbox/runtime_words.py): a translation may reorder the arguments
// (%2$s), and numbers keep the runtime's formatting; an argument that is itself a said() message is rendered
// first. Outside the grader the markers are plain control characters.
#include "internal.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr char kSaidStart = '\x02', kSaidArgument = '\x1f', kSaidEnd = '\x03';

struct SaidOut {
    char* p;
    size_t left;
    void put(char c) {
        if (left > 1) { *p++ = c; --left; }
    }
    void put(const char* s) { while (*s) put(*s++); }
};

// One conversion of format at spec (after its '%'), formatted alone into buf from the arguments; returns where
// the conversion ends.
const char* said_one(const char* spec, va_list* args, char* buf, size_t n) {
    char piece[32] = "%";
    size_t len = 1;
    const char* q = spec;
    auto keep = [&](char c) { if (len + 1 < sizeof piece) piece[len++] = c; };
    while (*q && std::strchr("-+ #0", *q)) keep(*q++);
    auto number = [&]() {
        if (*q == '*') {
            ++q;
            char digits[16];
            std::snprintf(digits, sizeof digits, "%d", va_arg(*args, int));
            for (const char* d = digits; *d; ++d) keep(*d);
        }
        while (*q >= '0' && *q <= '9') keep(*q++);
    };
    number();
    if (*q == '.') { keep(*q++); number(); }
    char length[3] = "";
    while (*q && std::strchr("hlztjL", *q) && std::strlen(length) < 2) {
        length[std::strlen(length)] = *q;
        keep(*q++);
    }
    char conversion = *q ? *q++ : 'd';
    keep(conversion);
    piece[len] = '\0';
    bool l = !std::strcmp(length, "l"), ll = !std::strcmp(length, "ll"), z = !std::strcmp(length, "z"),
         t = !std::strcmp(length, "t"), j = !std::strcmp(length, "j");
    switch (conversion) {
        case 'd': case 'i':
            if (ll) std::snprintf(buf, n, piece, va_arg(*args, long long));
            else if (l) std::snprintf(buf, n, piece, va_arg(*args, long));
            else if (z || t) std::snprintf(buf, n, piece, va_arg(*args, ptrdiff_t));
            else if (j) std::snprintf(buf, n, piece, va_arg(*args, intmax_t));
            else std::snprintf(buf, n, piece, va_arg(*args, int));
            break;
        case 'u': case 'x': case 'X': case 'o':
            if (ll) std::snprintf(buf, n, piece, va_arg(*args, unsigned long long));
            else if (l) std::snprintf(buf, n, piece, va_arg(*args, unsigned long));
            else if (z || t) std::snprintf(buf, n, piece, va_arg(*args, size_t));
            else if (j) std::snprintf(buf, n, piece, va_arg(*args, uintmax_t));
            else std::snprintf(buf, n, piece, va_arg(*args, unsigned));
            break;
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
            std::snprintf(buf, n, piece, va_arg(*args, double));
            break;
        case 'c': std::snprintf(buf, n, piece, va_arg(*args, int)); break;
        case 's': { const char* s = va_arg(*args, const char*); std::snprintf(buf, n, piece, s ? s : "(null)"); break; }
        case 'p': std::snprintf(buf, n, piece, va_arg(*args, void*)); break;
        default: std::snprintf(buf, n, "%s", piece);
    }
    return q;
}

int vsaid(char* out, size_t n, const char* format, va_list args) {
    if (n == 0) return 0;
    SaidOut o{out, n};
    o.put(kSaidStart);
    o.put(format);
    va_list mine;
    va_copy(mine, args);
    for (const char* f = format; *f; ++f) {
        if (*f != '%') continue;
        if (f[1] == '%') { ++f; continue; }
        char buf[512];
        f = said_one(f + 1, &mine, buf, sizeof buf) - 1;
        o.put(kSaidArgument);
        o.put(buf);  // an argument said() itself (a message within a message) keeps its markers: rendered first
    }
    va_end(mine);
    o.put(kSaidEnd);
    *o.p = '\0';
    return static_cast<int>(o.p - out);
}

// One innermost said() message of text at [start, end) as plain English: its format with the arguments put in.
std::string said_plain(const std::string& inner) {
    size_t cut = inner.find(kSaidArgument);
    std::string format = inner.substr(0, cut), out;
    std::vector<std::string> args;
    while (cut != std::string::npos) {
        size_t next = inner.find(kSaidArgument, cut + 1);
        args.push_back(inner.substr(cut + 1, next == std::string::npos ? std::string::npos : next - cut - 1));
        cut = next;
    }
    size_t used = 0;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') { out += format[i]; continue; }
        if (i + 1 < format.size() && format[i + 1] == '%') { out += '%'; ++i; continue; }
        size_t j = i + 1;
        while (j < format.size() && !std::strchr("diouxXeEfFgGaAcsp", format[j])) ++j;
        out += used < args.size() ? args[used++] : "";
        i = j;
    }
    return out;
}

}  // namespace

namespace cuda_cpu {

std::string plain_words(const std::string& text) {
    std::string out = text;
    for (;;) {  // innermost first, as the grader renders them (grader/sandbox/runtime_words.py)
        size_t end = out.find(kSaidEnd);
        size_t start = out.rfind(kSaidStart, end == std::string::npos ? std::string::npos : end);
        if (start == std::string::npos) break;
        size_t stop = end == std::string::npos ? out.size() : end;
        out = out.substr(0, start) + said_plain(out.substr(start + 1, stop - start - 1)) +
              (end == std::string::npos ? "" : out.substr(end + 1));
    }
    return out;
}

int said(char* out, size_t n, const char* format, ...) {
    va_list args;
    va_start(args, format);
    int written = vsaid(out, n, format, args);
    va_end(args);
    return written;
}

int said_words(char* out, size_t n, const char* words) {
    va_list none{};
    return vsaid(out, n, words, none);  // words has no conversions: nothing is read from none
}

std::string saying(const char* format, ...) {
    char buf[2048];
    va_list args;
    va_start(args, format);
    vsaid(buf, sizeof buf, format, args);
    va_end(args);
    return buf;
}

}  // namespace cuda_cpu
