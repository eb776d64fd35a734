! libapairs: the Fortran 2003 interface (module apairs), a bind(C) mirror of apairs.h.
!
! Compile this file with your own compiler (.mod files are compiler-specific) and link
! with -lapairs:
!     gfortran -c apairs.f90 && gfortran my_program.f90 apairs.o -lapairs
! Read include/apairs.h for what each function does and guarantees; this module only
! restates the declarations. tests/capi/check_fortran.py fails the build's tests when
! the two drift apart (a missing function or constant, a value, an argument kind).
!
! Row-major versus column-major
!   libapairs takes row-major matrices: A is n1 x d with leading dimension lda, B is
!   n2 x d (ldb), and the result D is n1 x n2 (ldd). Fortran stores arrays by column,
!   so a Fortran array A(d, n1), one point per column, IS the row-major n1 x d matrix
!   with lda = d, and a Fortran array D(n2, n1) receives the n1 x n2 result with
!   ldd = n2: D(j, i) is the distance between point i of A and point j of B.
!   Nothing is transposed or copied. A section such as A(1:d, :) of a larger array
!   A(m, n1) is the same matrix with lda = m.
!
! Mapping of the C types
!   handles (apairs_context_t, apairs_plan_t)  type(c_ptr), value
!   handle out-parameters (apairs_plan_t *)     type(c_ptr), intent(inout)
!   int32_t, enumerations, apairs_status_t      integer(c_int32_t), value
!   int64_t sizes and leading dimensions        integer(c_int64_t), value
!   double                                      real(c_double), value
!   int32_t *, int64_t *, double * (outputs)    the same kind, intent(inout): a call that
!                                               fails writes nothing, so the variable
!                                               keeps its value (intent(out) would let
!                                               the compiler discard a value set before
!                                               the call: gfortran -O2 does for scalars)
!   void * / const void * (A, B, D, stream)     type(c_ptr), value: pass c_loc(X) of an
!                                               array declared with the target attribute
!   char *buf (apairs_plan_describe)            character(kind=c_char), dimension(*)
!   const char * results                        type(c_ptr): use the *_f functions below,
!                                               which return character(len=:), allocatable
!   Every function returns its status as integer(c_int32_t): APAIRS_SUCCESS is 0.
!   The length argument of apairs_plan_describe may be NULL in C but must be given here.
!
! Example (the whole program is tests/capi/example.f90):
!     real(c_double), target :: A(d, n1), B(d, n2), dist(n2, n1)   ! not D: d is taken
!     status = apairs_context_create(ctx, APAIRS_BACKEND_AUTO, 0_c_int32_t)
!     status = apairs_plan_create_pairwise(plan, ctx, APAIRS_METRIC_L1, 0.0_c_double, &
!                  APAIRS_DTYPE_F64, n1, n2, d, d, d, n2)    ! lda = ldb = d, ldd = n2
!     status = apairs_plan_execute(plan, c_loc(A), c_loc(B), c_loc(dist))
!     print '(a)', apairs_plan_describe_f(plan)
module apairs
  use, intrinsic :: iso_c_binding, only: c_int32_t, c_int64_t, c_double, c_char, c_ptr, &
      c_size_t, c_associated, c_f_pointer
  implicit none
  private :: c_int32_t, c_int64_t, c_double, c_char, c_ptr, c_size_t, &
      c_associated, c_f_pointer
  private :: apairs_c_strlen, apairs_string_from_c

  ! ---------------------------------------------------------------------------------
  ! Versions
  ! ---------------------------------------------------------------------------------
  integer(c_int32_t), parameter :: APAIRS_VERSION_MAJOR = 0
  integer(c_int32_t), parameter :: APAIRS_VERSION_MINOR = 2
  integer(c_int32_t), parameter :: APAIRS_VERSION_PATCH = 0
  ! Fortran names are case-insensitive, so the macro APAIRS_VERSION_NUMBER would clash
  ! with the function apairs_version_number(): here it is spelled with a suffix _F (the
  ! rule for any C constant whose name is also a function's). Compare the two at run
  ! time to detect a module/library mismatch:
  !     if (apairs_version_number() /= APAIRS_VERSION_NUMBER_F) stop 1
  integer(c_int32_t), parameter :: APAIRS_VERSION_NUMBER_F = &
      APAIRS_VERSION_MAJOR * 10000 + APAIRS_VERSION_MINOR * 100 + APAIRS_VERSION_PATCH

  ! ---------------------------------------------------------------------------------
  ! Status codes (apairs_status_e)
  ! ---------------------------------------------------------------------------------
  integer(c_int32_t), parameter :: APAIRS_SUCCESS = 0
  integer(c_int32_t), parameter :: APAIRS_ERROR_NULL_POINTER = 1
  integer(c_int32_t), parameter :: APAIRS_ERROR_INVALID_VALUE = 2
  integer(c_int32_t), parameter :: APAIRS_ERROR_OVERFLOW = 3
  integer(c_int32_t), parameter :: APAIRS_ERROR_UNKNOWN_ENUM = 4
  integer(c_int32_t), parameter :: APAIRS_ERROR_UNSUPPORTED = 5
  integer(c_int32_t), parameter :: APAIRS_ERROR_BACKEND_UNAVAILABLE = 6
  integer(c_int32_t), parameter :: APAIRS_ERROR_OUT_OF_MEMORY = 7
  integer(c_int32_t), parameter :: APAIRS_ERROR_DEVICE = 8
  integer(c_int32_t), parameter :: APAIRS_ERROR_INVALID_POINTER = 9
  integer(c_int32_t), parameter :: APAIRS_ERROR_INTERNAL = 10

  ! ---------------------------------------------------------------------------------
  ! Backends (apairs_backend_e) and context options (apairs_option_e)
  ! ---------------------------------------------------------------------------------
  integer(c_int32_t), parameter :: APAIRS_BACKEND_AUTO = 0
  integer(c_int32_t), parameter :: APAIRS_BACKEND_HOST = 1
  integer(c_int32_t), parameter :: APAIRS_BACKEND_CUDA = 2

  integer(c_int32_t), parameter :: APAIRS_OPTION_OCCUPANCY_TARGET = 1
  integer(c_int32_t), parameter :: APAIRS_OPTION_HOST_THREADS = 2
  integer(c_int32_t), parameter :: APAIRS_OPTION_STAGING_BYTES = 3
  integer(c_int32_t), parameter :: APAIRS_OPTION_TF32 = 4

  ! ---------------------------------------------------------------------------------
  ! Element types (apairs_dtype_e) and metrics (apairs_metric_e)
  ! ---------------------------------------------------------------------------------
  integer(c_int32_t), parameter :: APAIRS_DTYPE_F32 = 1
  integer(c_int32_t), parameter :: APAIRS_DTYPE_F64 = 2
  integer(c_int32_t), parameter :: APAIRS_DTYPE_U8 = 3

  integer(c_int32_t), parameter :: APAIRS_METRIC_L1 = 1
  integer(c_int32_t), parameter :: APAIRS_METRIC_L2 = 2
  integer(c_int32_t), parameter :: APAIRS_METRIC_SQEUCLIDEAN = 3
  integer(c_int32_t), parameter :: APAIRS_METRIC_LP = 4
  integer(c_int32_t), parameter :: APAIRS_METRIC_LINF = 5
  integer(c_int32_t), parameter :: APAIRS_METRIC_DOT = 6
  integer(c_int32_t), parameter :: APAIRS_METRIC_COSINE = 7
  integer(c_int32_t), parameter :: APAIRS_METRIC_HAMMING = 8

  ! Batched plans: layouts, orders, ops (apairs_layout_e, apairs_order_e, apairs_op_e).
  ! Fortran arrays are column-major: pass APAIRS_ORDER_COL_MAJOR, and for AoS an array
  ! A(lda, k, batch) is lda = size(A, 1), stride_a = size(A, 1) * size(A, 2).
  integer(c_int32_t), parameter :: APAIRS_LAYOUT_AOS = 1
  integer(c_int32_t), parameter :: APAIRS_LAYOUT_SOA = 2
  integer(c_int32_t), parameter :: APAIRS_ORDER_ROW_MAJOR = 1
  integer(c_int32_t), parameter :: APAIRS_ORDER_COL_MAJOR = 2
  integer(c_int32_t), parameter :: APAIRS_OP_N = 0
  integer(c_int32_t), parameter :: APAIRS_OP_T = 1
  integer(c_int32_t), parameter :: APAIRS_UPLO_LOWER = 1
  integer(c_int32_t), parameter :: APAIRS_UPLO_UPPER = 2

  ! Two-body statistics plans (apairs_pairs_e, APAIRS_KNN_MAX_K). A Fortran array
  ! X(d, n) is n points of d coordinates. Without a periodic box pass nbox = 0 and any
  ! real(c_double) array as box; for AUTO pass c_null_ptr (or A) as B and weights_a
  ! again as weights_b.
  integer(c_int32_t), parameter :: APAIRS_PAIRS_AUTO = 1
  integer(c_int32_t), parameter :: APAIRS_PAIRS_CROSS = 2
  integer(c_int32_t), parameter :: APAIRS_KNN_MAX_K = 128

  ! Genotype plans (apairs_genotype_metric_e, apairs_genotype_missing_e). A packed
  ! row is ceil(d / 4) bytes of PLINK .bed codes: pass integer(c_int8_t) arrays with c_loc.
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_HAMMING = 1
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_ALLELE_COUNT = 2
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_IBS0 = 3
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_IBS1 = 4
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_IBS2 = 5
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_NONMISSING = 6
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_DISTANCE = 7
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_IBS = 8
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_ONE_MINUS_IBS = 9
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_MISSING_WEIGHTED = 1
  integer(c_int32_t), parameter :: APAIRS_GENOTYPE_MISSING_FLAT = 2

  ! ---------------------------------------------------------------------------------
  ! The C functions, in the order of apairs.h
  ! ---------------------------------------------------------------------------------
  interface
    ! Versions
    function apairs_version_number() bind(C, name="apairs_version_number") result(r)
      import
      integer(c_int32_t) :: r
    end function apairs_version_number

    function apairs_version_string() bind(C, name="apairs_version_string") result(r)
      import
      type(c_ptr) :: r
    end function apairs_version_string

    ! Status codes and errors
    function apairs_status_string(status) bind(C, name="apairs_status_string") result(r)
      import
      integer(c_int32_t), value :: status
      type(c_ptr) :: r
    end function apairs_status_string

    function apairs_last_error() bind(C, name="apairs_last_error") result(r)
      import
      type(c_ptr) :: r
    end function apairs_last_error

    ! Contexts
    function apairs_cuda_device_count(count) bind(C, name="apairs_cuda_device_count") result(r)
      import
      integer(c_int32_t), intent(inout) :: count
      integer(c_int32_t) :: r
    end function apairs_cuda_device_count

    function apairs_context_create(ctx, backend, device) &
        bind(C, name="apairs_context_create") result(r)
      import
      type(c_ptr), intent(inout) :: ctx
      integer(c_int32_t), value :: backend
      integer(c_int32_t), value :: device
      integer(c_int32_t) :: r
    end function apairs_context_create

    function apairs_context_destroy(ctx) bind(C, name="apairs_context_destroy") result(r)
      import
      type(c_ptr), value :: ctx
      integer(c_int32_t) :: r
    end function apairs_context_destroy

    function apairs_context_get_backend(ctx, backend) &
        bind(C, name="apairs_context_get_backend") result(r)
      import
      type(c_ptr), value :: ctx
      integer(c_int32_t), intent(inout) :: backend
      integer(c_int32_t) :: r
    end function apairs_context_get_backend

    function apairs_context_set_stream(ctx, stream) &
        bind(C, name="apairs_context_set_stream") result(r)
      import
      type(c_ptr), value :: ctx
      type(c_ptr), value :: stream
      integer(c_int32_t) :: r
    end function apairs_context_set_stream

    function apairs_context_set_option(ctx, option, value) &
        bind(C, name="apairs_context_set_option") result(r)
      import
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: option
      real(c_double), value :: value
      integer(c_int32_t) :: r
    end function apairs_context_set_option

    function apairs_context_get_option(ctx, option, value) &
        bind(C, name="apairs_context_get_option") result(r)
      import
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: option
      real(c_double), intent(inout) :: value
      integer(c_int32_t) :: r
    end function apairs_context_get_option

    ! All-pairs plans
    function apairs_plan_create_pairwise(plan, ctx, metric, p, dtype, n1, n2, d, &
        lda, ldb, ldd) bind(C, name="apairs_plan_create_pairwise") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: metric
      real(c_double), value :: p
      integer(c_int32_t), value :: dtype
      integer(c_int64_t), value :: n1
      integer(c_int64_t), value :: n2
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: ldd
      integer(c_int32_t) :: r
    end function apairs_plan_create_pairwise

    function apairs_plan_execute(plan, A, B, D) bind(C, name="apairs_plan_execute") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      type(c_ptr), value :: D
      integer(c_int32_t) :: r
    end function apairs_plan_execute

    function apairs_plan_describe(plan, buf, size, length) &
        bind(C, name="apairs_plan_describe") result(r)
      import
      type(c_ptr), value :: plan
      character(kind=c_char), dimension(*), intent(inout) :: buf
      integer(c_int64_t), value :: size
      integer(c_int64_t), intent(inout) :: length
      integer(c_int32_t) :: r
    end function apairs_plan_describe

    function apairs_plan_destroy(plan) bind(C, name="apairs_plan_destroy") result(r)
      import
      type(c_ptr), value :: plan
      integer(c_int32_t) :: r
    end function apairs_plan_destroy

    function apairs_plan_create_gemm_batched(plan, ctx, dtype, layout, order, trans_a, trans_b, &
        m, n, k, alpha, beta, lda, stride_a, ldb, stride_b, ldc, stride_c, batch) &
        bind(C, name="apairs_plan_create_gemm_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int32_t), value :: trans_a
      integer(c_int32_t), value :: trans_b
      integer(c_int64_t), value :: m
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: k
      real(c_double), value :: alpha
      real(c_double), value :: beta
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: stride_b
      integer(c_int64_t), value :: ldc
      integer(c_int64_t), value :: stride_c
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_gemm_batched

    function apairs_plan_execute_gemm(plan, A, B, C) bind(C, name="apairs_plan_execute_gemm") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      type(c_ptr), value :: C
      integer(c_int32_t) :: r
    end function apairs_plan_execute_gemm

    function apairs_plan_create_potrf_batched(plan, ctx, dtype, layout, order, uplo, n, lda, stride_a, &
        batch) bind(C, name="apairs_plan_create_potrf_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int32_t), value :: uplo
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_potrf_batched

    ! info(batch) receives each element's LAPACK info.
    function apairs_plan_execute_potrf(plan, A, info) bind(C, name="apairs_plan_execute_potrf") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      integer(c_int32_t), dimension(*), intent(inout) :: info
      integer(c_int32_t) :: r
    end function apairs_plan_execute_potrf

    function apairs_plan_create_potrs_batched(plan, ctx, dtype, layout, order, uplo, n, nrhs, lda, &
        stride_a, ldb, stride_b, batch) bind(C, name="apairs_plan_create_potrs_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int32_t), value :: uplo
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: nrhs
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: stride_b
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_potrs_batched

    function apairs_plan_execute_potrs(plan, A, B) bind(C, name="apairs_plan_execute_potrs") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      integer(c_int32_t) :: r
    end function apairs_plan_execute_potrs

    function apairs_plan_create_posv_batched(plan, ctx, dtype, layout, order, uplo, n, nrhs, lda, &
        stride_a, ldb, stride_b, batch) bind(C, name="apairs_plan_create_posv_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int32_t), value :: uplo
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: nrhs
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: stride_b
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_posv_batched

    ! info(batch) receives each element's LAPACK info; B is solved where it is 0.
    function apairs_plan_execute_posv(plan, A, B, info) bind(C, name="apairs_plan_execute_posv") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      integer(c_int32_t), dimension(*), intent(inout) :: info
      integer(c_int32_t) :: r
    end function apairs_plan_execute_posv

    function apairs_plan_create_dot_batched(plan, ctx, dtype, layout, n, stride_x, stride_y, batch) &
        bind(C, name="apairs_plan_create_dot_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: stride_x
      integer(c_int64_t), value :: stride_y
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_dot_batched

    ! out points to batch values of the dtype: x_e . y_e.
    function apairs_plan_execute_dot(plan, x, y, out) bind(C, name="apairs_plan_execute_dot") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: x
      type(c_ptr), value :: y
      type(c_ptr), value :: out
      integer(c_int32_t) :: r
    end function apairs_plan_execute_dot

    function apairs_plan_create_gemv_batched(plan, ctx, dtype, layout, order, trans, m, n, alpha, &
        beta, lda, stride_a, stride_x, stride_y, batch) &
        bind(C, name="apairs_plan_create_gemv_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int32_t), value :: trans
      integer(c_int64_t), value :: m
      integer(c_int64_t), value :: n
      real(c_double), value :: alpha
      real(c_double), value :: beta
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: stride_x
      integer(c_int64_t), value :: stride_y
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_gemv_batched

    function apairs_plan_execute_gemv(plan, A, x, y) bind(C, name="apairs_plan_execute_gemv") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: x
      type(c_ptr), value :: y
      integer(c_int32_t) :: r
    end function apairs_plan_execute_gemv

    function apairs_plan_create_getrf_batched(plan, ctx, dtype, layout, order, n, lda, stride_a, &
        batch) bind(C, name="apairs_plan_create_getrf_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_getrf_batched

    ! ipiv(n * batch) receives the pivots (1-based), info(batch) each element's LAPACK info.
    function apairs_plan_execute_getrf(plan, A, ipiv, info) &
        bind(C, name="apairs_plan_execute_getrf") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      integer(c_int32_t), dimension(*), intent(inout) :: ipiv
      integer(c_int32_t), dimension(*), intent(inout) :: info
      integer(c_int32_t) :: r
    end function apairs_plan_execute_getrf

    function apairs_plan_create_getrs_batched(plan, ctx, dtype, layout, order, trans, n, nrhs, lda, &
        stride_a, ldb, stride_b, batch) bind(C, name="apairs_plan_create_getrs_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int32_t), value :: trans
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: nrhs
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: stride_b
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_getrs_batched

    function apairs_plan_execute_getrs(plan, A, ipiv, B) bind(C, name="apairs_plan_execute_getrs") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      integer(c_int32_t), dimension(*), intent(in) :: ipiv
      type(c_ptr), value :: B
      integer(c_int32_t) :: r
    end function apairs_plan_execute_getrs

    function apairs_plan_create_gesv_batched(plan, ctx, dtype, layout, order, n, nrhs, lda, &
        stride_a, ldb, stride_b, batch) bind(C, name="apairs_plan_create_gesv_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: layout
      integer(c_int32_t), value :: order
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: nrhs
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: stride_a
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: stride_b
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_gesv_batched

    ! ipiv(n * batch) receives the pivots, info(batch) the LAPACK info; B solved where it is 0.
    function apairs_plan_execute_gesv(plan, A, ipiv, B, info) &
        bind(C, name="apairs_plan_execute_gesv") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      integer(c_int32_t), dimension(*), intent(inout) :: ipiv
      type(c_ptr), value :: B
      integer(c_int32_t), dimension(*), intent(inout) :: info
      integer(c_int32_t) :: r
    end function apairs_plan_execute_gesv

    function apairs_plan_create_transpose_batched(plan, ctx, dtype, to_layout, entries, stride_in, &
        stride_out, batch) bind(C, name="apairs_plan_create_transpose_batched") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: to_layout
      integer(c_int64_t), value :: entries
      integer(c_int64_t), value :: stride_in
      integer(c_int64_t), value :: stride_out
      integer(c_int64_t), value :: batch
      integer(c_int32_t) :: r
    end function apairs_plan_create_transpose_batched

    function apairs_plan_execute_transpose(plan, in, out) &
        bind(C, name="apairs_plan_execute_transpose") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: in
      type(c_ptr), value :: out
      integer(c_int32_t) :: r
    end function apairs_plan_execute_transpose

    ! Two-body statistics plans
    function apairs_plan_create_pair_counts(plan, ctx, pairs, metric, p, dtype, n1, n2, d, lda, ldb, &
        nradii, radii, nbox, box) bind(C, name="apairs_plan_create_pair_counts") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: pairs
      integer(c_int32_t), value :: metric
      real(c_double), value :: p
      integer(c_int32_t), value :: dtype
      integer(c_int64_t), value :: n1
      integer(c_int64_t), value :: n2
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: nradii
      real(c_double), dimension(*), intent(in) :: radii
      integer(c_int64_t), value :: nbox
      real(c_double), dimension(*), intent(in) :: box
      integer(c_int32_t) :: r
    end function apairs_plan_create_pair_counts

    ! counts(nradii)
    function apairs_plan_execute_pair_counts(plan, A, B, counts) &
        bind(C, name="apairs_plan_execute_pair_counts") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      integer(c_int64_t), dimension(*), intent(inout) :: counts
      integer(c_int32_t) :: r
    end function apairs_plan_execute_pair_counts

    function apairs_plan_create_histogram_uniform(plan, ctx, pairs, metric, p, dtype, n1, n2, d, lda, ldb, &
        nbins, rmin, rmax, nbox, box) bind(C, name="apairs_plan_create_histogram_uniform") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: pairs
      integer(c_int32_t), value :: metric
      real(c_double), value :: p
      integer(c_int32_t), value :: dtype
      integer(c_int64_t), value :: n1
      integer(c_int64_t), value :: n2
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: nbins
      real(c_double), value :: rmin
      real(c_double), value :: rmax
      integer(c_int64_t), value :: nbox
      real(c_double), dimension(*), intent(in) :: box
      integer(c_int32_t) :: r
    end function apairs_plan_create_histogram_uniform

    ! edges(nbins + 1)
    function apairs_plan_create_histogram_edges(plan, ctx, pairs, metric, p, dtype, n1, n2, d, lda, ldb, &
        nbins, edges, nbox, box) bind(C, name="apairs_plan_create_histogram_edges") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: pairs
      integer(c_int32_t), value :: metric
      real(c_double), value :: p
      integer(c_int32_t), value :: dtype
      integer(c_int64_t), value :: n1
      integer(c_int64_t), value :: n2
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: nbins
      real(c_double), dimension(*), intent(in) :: edges
      integer(c_int64_t), value :: nbox
      real(c_double), dimension(*), intent(in) :: box
      integer(c_int32_t) :: r
    end function apairs_plan_create_histogram_edges

    ! counts(nbins + 2): below the first edge, the bins, at or above the last (or NaN)
    function apairs_plan_execute_histogram(plan, A, B, counts) &
        bind(C, name="apairs_plan_execute_histogram") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      integer(c_int64_t), dimension(*), intent(inout) :: counts
      integer(c_int32_t) :: r
    end function apairs_plan_execute_histogram

    function apairs_plan_execute_histogram_weighted(plan, A, B, weights_a, weights_b, counts, sums) &
        bind(C, name="apairs_plan_execute_histogram_weighted") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      real(c_double), dimension(*), intent(in) :: weights_a
      real(c_double), dimension(*), intent(in) :: weights_b
      integer(c_int64_t), dimension(*), intent(inout) :: counts
      real(c_double), dimension(*), intent(inout) :: sums
      integer(c_int32_t) :: r
    end function apairs_plan_execute_histogram_weighted

    function apairs_plan_create_knn(plan, ctx, pairs, metric, p, dtype, n1, n2, d, lda, ldb, k) &
        bind(C, name="apairs_plan_create_knn") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: pairs
      integer(c_int32_t), value :: metric
      real(c_double), value :: p
      integer(c_int32_t), value :: dtype
      integer(c_int64_t), value :: n1
      integer(c_int64_t), value :: n2
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: k
      integer(c_int32_t) :: r
    end function apairs_plan_create_knn

    ! indices(k, n1) (0-based row numbers) and distances(k, n1) of the dtype, via c_loc
    function apairs_plan_execute_knn(plan, A, B, indices, distances) &
        bind(C, name="apairs_plan_execute_knn") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      integer(c_int64_t), dimension(*), intent(inout) :: indices
      type(c_ptr), value :: distances
      integer(c_int32_t) :: r
    end function apairs_plan_execute_knn

    function apairs_genotype_pack(ctx, genotypes, n, d, ld_genotypes, missing_value, packed, &
        ld_packed) bind(C, name="apairs_genotype_pack") result(r)
      import
      type(c_ptr), value :: ctx
      type(c_ptr), value :: genotypes
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: ld_genotypes
      integer(c_int32_t), value :: missing_value
      type(c_ptr), value :: packed
      integer(c_int64_t), value :: ld_packed
      integer(c_int32_t) :: r
    end function apairs_genotype_pack

    ! founders may be c_null_ptr (every row is a founder).
    function apairs_genotype_missing_weights(packed, n, d, ld, founders, weights) &
        bind(C, name="apairs_genotype_missing_weights") result(r)
      import
      type(c_ptr), value :: packed
      integer(c_int64_t), value :: n
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: ld
      type(c_ptr), value :: founders
      type(c_ptr), value :: weights
      integer(c_int32_t) :: r
    end function apairs_genotype_missing_weights

    ! weights: c_loc of d integer(c_int32_t) weights (read as uint32) for
    ! APAIRS_GENOTYPE_MISSING_WEIGHTED, else c_null_ptr.
    function apairs_plan_create_genotype(plan, ctx, metric, missing, n1, n2, d, lda, ldb, ldd, &
        weights) bind(C, name="apairs_plan_create_genotype") result(r)
      import
      type(c_ptr), intent(inout) :: plan
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: metric
      integer(c_int32_t), value :: missing
      integer(c_int64_t), value :: n1
      integer(c_int64_t), value :: n2
      integer(c_int64_t), value :: d
      integer(c_int64_t), value :: lda
      integer(c_int64_t), value :: ldb
      integer(c_int64_t), value :: ldd
      type(c_ptr), value :: weights
      integer(c_int32_t) :: r
    end function apairs_plan_create_genotype

    function apairs_plan_execute_genotype(plan, A, B, D) &
        bind(C, name="apairs_plan_execute_genotype") result(r)
      import
      type(c_ptr), value :: plan
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      type(c_ptr), value :: D
      integer(c_int32_t) :: r
    end function apairs_plan_execute_genotype
  end interface

  ! C's strlen, for the *_f functions (private).
  interface
    function apairs_c_strlen(s) bind(C, name="strlen") result(n)
      import
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function apairs_c_strlen
  end interface

contains

  ! A NUL-terminated C string as a Fortran string ("" for a NULL pointer).
  function apairs_string_from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), dimension(:), pointer :: chars
    integer :: i, n

    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(apairs_c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function apairs_string_from_c

  !> apairs_version_string() as a Fortran string, e.g. "0.1.0 (host+openmp, cuda sm_90)".
  function apairs_version_string_f() result(s)
    character(len=:), allocatable :: s
    s = apairs_string_from_c(apairs_version_string())
  end function apairs_version_string_f

  !> apairs_status_string(status) as a Fortran string ("success", "null pointer", ...).
  function apairs_status_string_f(status) result(s)
    integer(c_int32_t), intent(in) :: status
    character(len=:), allocatable :: s
    s = apairs_string_from_c(apairs_status_string(status))
  end function apairs_status_string_f

  !> apairs_last_error() as a Fortran string: the detail of the last failed call on this
  !> thread ("" after a success). Copied, so it stays valid after later calls.
  function apairs_last_error_f() result(s)
    character(len=:), allocatable :: s
    s = apairs_string_from_c(apairs_last_error())
  end function apairs_last_error_f

  !> The one-line description of a plan (apairs_plan_describe), whole, as a Fortran
  !> string. On failure it returns "" and, if given, sets status (APAIRS_SUCCESS
  !> otherwise); apairs_last_error_f() then says why.
  function apairs_plan_describe_f(plan, status) result(s)
    type(c_ptr), intent(in) :: plan
    integer(c_int32_t), intent(out), optional :: status
    character(len=:), allocatable :: s
    character(kind=c_char), dimension(1) :: probe
    character(kind=c_char), dimension(:), allocatable :: buf
    integer(c_int64_t) :: length, written
    integer(c_int32_t) :: st
    integer :: i

    length = 0
    st = apairs_plan_describe(plan, probe, 1_c_int64_t, length)
    if (st == APAIRS_SUCCESS) then
      allocate(buf(length + 1))
      st = apairs_plan_describe(plan, buf, length + 1, written)
    end if
    if (st == APAIRS_SUCCESS) then
      allocate(character(len=length) :: s)
      do i = 1, int(length)
        s(i:i) = buf(i)
      end do
    else
      s = ''
    end if
    if (present(status)) status = st
  end function apairs_plan_describe_f

end module apairs
