# The per-weight rules as the kernels take them: fastnet._kernels._rules.Rule, a
# typed record made by name from the rules' table (_rules.h), for the kernels that
# train with a rule (_per_weight.pyx, _trials.pyx):
#     from fastnet._kernels._rules cimport Rule, fn_rule
cdef extern from "_rules.h" nogil:
    enum: FN_RULE_NP
    enum: FN_RULE_COUNT
    enum: FN_RULE_BACKPROP
    enum: FN_RULE_IRPROP_PLUS
    ctypedef struct fn_rule:
        int code
        double p[FN_RULE_NP]


cdef class Rule:
    cdef fn_rule c
    cdef readonly str name
    cdef readonly tuple states
