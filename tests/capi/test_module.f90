! The Fortran module beyond the example: the *_f string functions, error statuses and
! messages, context options, and leading dimensions larger than the data (a Fortran
! array section A(1:d, :) of A(m, n1) is the row-major matrix with lda = m).
program test_module
  use, intrinsic :: iso_c_binding
  use apairs
  implicit none
  integer(c_int64_t), parameter :: d = 3, n1 = 4, n2 = 5, m = 7, ldd = n2 + 2
  real(c_float), target :: A(m, n1), B(d, n2), dist(ldd, n1)
  type(c_ptr) :: ctx, plan
  integer(c_int32_t) :: backend, count, st
  real(c_double) :: value
  character(len=:), allocatable :: desc
  character(kind=c_char), dimension(4096) :: buf
  integer(c_int64_t) :: length
  integer :: i, j, failures

  failures = 0
  call expect(apairs_version_number() == APAIRS_VERSION_NUMBER_F, 'version number')
  call expect(index(apairs_version_string_f(), '0.2.0') == 1, 'version string')
  call expect(apairs_status_string_f(APAIRS_SUCCESS) == 'success', 'status string 0')
  call expect(apairs_status_string_f(12345_c_int32_t) == 'unknown status', 'unknown status')
  call expect(apairs_cuda_device_count(count) == APAIRS_SUCCESS .and. count >= 0, 'device count')

  ! Errors: status, message naming the argument, nothing written.
  ctx = c_null_ptr
  call expect(apairs_context_create(ctx, 99_c_int32_t, 0_c_int32_t) == APAIRS_ERROR_UNKNOWN_ENUM, &
      'bad backend')
  call expect(index(apairs_last_error_f(), 'backend') > 0, 'message names backend')
  call expect(.not. c_associated(ctx), 'ctx untouched on failure')
  ! Scalar outputs keep their values too: the module declares them intent(inout) (under
  ! intent(out), gfortran -O2 drops the stores before the call).
  backend = 77
  value = 1.5_c_double
  call expect(apairs_context_get_backend(c_null_ptr, backend) == APAIRS_ERROR_NULL_POINTER .and. &
      backend == 77, 'backend untouched on failure')
  call expect(apairs_context_get_option(c_null_ptr, APAIRS_OPTION_HOST_THREADS, value) == &
      APAIRS_ERROR_NULL_POINTER .and. value == 1.5_c_double, 'option value untouched on failure')

  call check(apairs_context_create(ctx, APAIRS_BACKEND_HOST, 0_c_int32_t))
  call expect(len(apairs_last_error_f()) == 0, 'no message after success')
  call check(apairs_context_get_backend(ctx, backend))
  call expect(backend == APAIRS_BACKEND_HOST, 'host backend')
  call check(apairs_context_set_option(ctx, APAIRS_OPTION_HOST_THREADS, 2.0_c_double))
  call check(apairs_context_get_option(ctx, APAIRS_OPTION_HOST_THREADS, value))
  call expect(value == 2.0_c_double, 'option round trip')
  call check(apairs_context_set_stream(ctx, c_null_ptr))

  call expect(apairs_plan_create_pairwise(plan, ctx, APAIRS_METRIC_L2, 0.0_c_double, &
      APAIRS_DTYPE_F32, n1, n2, d, d - 1, d, ldd) == APAIRS_ERROR_INVALID_VALUE, 'lda < d')
  call expect(index(apairs_last_error_f(), 'lda') > 0, 'message names lda')
  desc = apairs_plan_describe_f(c_null_ptr, st)
  call expect(st == APAIRS_ERROR_NULL_POINTER .and. len(desc) == 0, 'describe NULL plan')

  ! LINF on float, lda = m > d, ldd = n2 + 2: the padding rows of dist stay as they were.
  A = -1.0e30_c_float
  do i = 1, int(n1)
    A(1:d, i) = [(real(i * j, c_float) / 3, j = 1, int(d))]
  end do
  do j = 1, int(n2)
    B(:, j) = [(real(j - 2 * i, c_float), i = 1, int(d))]
  end do
  dist = 42.0_c_float
  call check(apairs_plan_create_pairwise(plan, ctx, APAIRS_METRIC_LINF, 0.0_c_double, &
      APAIRS_DTYPE_F32, n1, n2, d, m, d, ldd))
  call check(apairs_plan_execute(plan, c_loc(A), c_loc(B), c_loc(dist)))
  do i = 1, int(n1)
    do j = 1, int(n2)
      call expect(dist(j, i) == maxval(abs(A(1:d, i) - B(:, j))), 'LINF value')
    end do
    call expect(all(dist(n2 + 1:, i) == 42.0_c_float), 'padding untouched')
  end do

  ! describe_f returns the whole description, the same as the C call into a buffer.
  desc = apairs_plan_describe_f(plan)
  call check(apairs_plan_describe(plan, buf, int(size(buf), c_int64_t), length))
  call expect(len(desc) == length .and. length > 0 .and. length < size(buf), 'describe length')
  do i = 1, len(desc)
    if (desc(i:i) /= buf(i)) failures = failures + 1
  end do
  call expect(buf(length + 1) == c_null_char, 'describe NUL')

  call check(apairs_plan_destroy(plan))
  call check(apairs_plan_destroy(c_null_ptr))
  call check(apairs_context_destroy(ctx))
  if (failures /= 0) then
    print '(i0, a)', failures, ' failure(s)'
    stop 1
  end if
  print '(a)', 'ok: ' // desc
  deallocate(desc)  ! a main program's allocatables live to the end: free it for LeakSanitizer

contains

  subroutine expect(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(a)', 'FAILED: ' // what // ' (last error: ' // apairs_last_error_f() // ')'
      failures = failures + 1
    end if
  end subroutine expect

  subroutine check(status)
    integer(c_int32_t), intent(in) :: status
    call expect(status == APAIRS_SUCCESS, apairs_status_string_f(status) // ': ' // apairs_last_error_f())
  end subroutine check

end program test_module
