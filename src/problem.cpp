#include "problem.hpp"

namespace apairs {

const char *metric_name(int32_t metric) {
    switch (metric) {
    case APAIRS_METRIC_L1: return "l1";
    case APAIRS_METRIC_L2: return "l2";
    case APAIRS_METRIC_SQEUCLIDEAN: return "sqeuclidean";
    case APAIRS_METRIC_LP: return "lp";
    case APAIRS_METRIC_LINF: return "linf";
    case APAIRS_METRIC_DOT: return "dot";
    case APAIRS_METRIC_COSINE: return "cosine";
    case APAIRS_METRIC_HAMMING: return "hamming";
    }
    return nullptr;
}

const char *dtype_name(int32_t dtype) {
    switch (dtype) {
    case APAIRS_DTYPE_F32: return "f32";
    case APAIRS_DTYPE_F64: return "f64";
    case APAIRS_DTYPE_U8: return "u8";
    }
    return nullptr;
}

}  // namespace apairs
