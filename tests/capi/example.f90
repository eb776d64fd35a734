! L1 distances between the columns of A(d, n1) and B(d, n2): Fortran's A(d, n1) is
! the row-major n1 x d matrix with lda = d, and dist(n2, n1) receives the n1 x n2 result.
program example
  use, intrinsic :: iso_c_binding
  use apairs
  implicit none
  integer(c_int64_t), parameter :: d = 3, n1 = 5, n2 = 4
  real(c_double), target :: A(d, n1), B(d, n2), dist(n2, n1)
  type(c_ptr) :: ctx, plan
  integer :: i, j, k

  do k = 1, d
    A(k, :) = [(sin(3.0_c_double * i + k), i = 1, n1)]
    B(k, :) = [(cos(2.0_c_double * j - k), j = 1, n2)]
  end do
  call check(apairs_context_create(ctx, APAIRS_BACKEND_AUTO, 0_c_int32_t))
  call check(apairs_plan_create_pairwise(plan, ctx, APAIRS_METRIC_L1, 0.0_c_double, &
             APAIRS_DTYPE_F64, n1, n2, d, d, d, n2))   ! lda = ldb = d, ldd = n2
  call check(apairs_plan_execute(plan, c_loc(A), c_loc(B), c_loc(dist)))

  print '(a)', apairs_plan_describe_f(plan)
  do i = 1, n1
    do j = 1, n2
      if (abs(dist(j, i) - sum(abs(A(:, i) - B(:, j)))) > 1e-12_c_double) then
        print '(a, 2i3, 2es25.16)', 'mismatch', i, j, dist(j, i), sum(abs(A(:, i) - B(:, j)))
        stop 1
      end if
    end do
  end do
  call check(apairs_plan_destroy(plan))
  call check(apairs_context_destroy(ctx))
  print '(a)', 'ok'

contains

  subroutine check(status)
    integer(c_int32_t), intent(in) :: status
    if (status /= APAIRS_SUCCESS) then
      print '(a)', apairs_status_string_f(status) // ': ' // apairs_last_error_f()
      stop 1
    end if
  end subroutine check

end program example
