! Batched plans from Fortran, on column-major AoS arrays as Fortran stores them:
! gemm: C(:, :, e) = matmul(A(:, :, e), B(:, :, e)) for 1000 elements of 3 x 4 times 4 x 2,
! checked against matmul, then with op(A) = A**T through APAIRS_OP_T;
! potrf + potrs: S(:, :, e) = L L**T and S X = R for 1000 SPD 4 x 4 matrices, one of them
! not positive definite (its info says at which column).
program batched
  use, intrinsic :: iso_c_binding
  use apairs
  implicit none
  integer(c_int64_t), parameter :: m = 3, n = 2, k = 4, batch = 1000
  integer(c_int64_t), parameter :: p = 4, nrhs = 2
  real(c_double), target :: A(m, k, batch), At(k, m, batch), B(k, n, batch), C(m, n, batch)
  real(c_double), target :: S(p, p, batch), F(p, p, batch), X(p, nrhs, batch), R(p, nrhs, batch)
  integer(c_int32_t) :: info(batch)
  type(c_ptr) :: ctx, plan
  integer :: e, i, failures

  call random_number(A)
  call random_number(B)
  A = A - 0.5_c_double
  do e = 1, int(batch)
    At(:, :, e) = transpose(A(:, :, e))
  end do
  failures = 0
  call check(apairs_context_create(ctx, APAIRS_BACKEND_AUTO, 0_c_int32_t))

  ! lda = m, stride_a = m * k (one element after another), likewise B and C.
  call check(apairs_plan_create_gemm_batched(plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS, &
      APAIRS_ORDER_COL_MAJOR, APAIRS_OP_N, APAIRS_OP_N, m, n, k, 1.0_c_double, 0.0_c_double, &
      m, m * k, k, k * n, m, m * n, batch))
  C = -1
  call check(apairs_plan_execute_gemm(plan, c_loc(A), c_loc(B), c_loc(C)))
  call check(apairs_plan_destroy(plan))
  do e = 1, int(batch)
    if (maxval(abs(C(:, :, e) - matmul(A(:, :, e), B(:, :, e)))) > 1e-14_c_double) failures = failures + 1
  end do

  ! op(A) = At**T: the stored matrix is k x m (lda = k).
  call check(apairs_plan_create_gemm_batched(plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS, &
      APAIRS_ORDER_COL_MAJOR, APAIRS_OP_T, APAIRS_OP_N, m, n, k, 2.0_c_double, 1.0_c_double, &
      k, k * m, k, k * n, m, m * n, batch))
  call check(apairs_plan_execute_gemm(plan, c_loc(At), c_loc(B), c_loc(C)))
  call check(apairs_plan_destroy(plan))
  do e = 1, int(batch)
    if (maxval(abs(C(:, :, e) - 3 * matmul(A(:, :, e), B(:, :, e)))) > 1e-13_c_double) failures = failures + 1
  end do

  ! potrf / potrs, lower triangle: S = M M**T / p + I; element 7 gets S(3, 3) = -1.
  call random_number(F)
  do e = 1, int(batch)
    S(:, :, e) = matmul(F(:, :, e), transpose(F(:, :, e))) / p
    do i = 1, int(p)
      S(i, i, e) = S(i, i, e) + 1
    end do
  end do
  S(3, 3, 7) = -1
  F = S
  call random_number(R)
  X = R
  call check(apairs_plan_create_potrf_batched(plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS, &
      APAIRS_ORDER_COL_MAJOR, APAIRS_UPLO_LOWER, p, p, p * p, batch))
  info = -1
  call check(apairs_plan_execute_potrf(plan, c_loc(F), info))
  call check(apairs_plan_destroy(plan))
  call check(apairs_plan_create_potrs_batched(plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS, &
      APAIRS_ORDER_COL_MAJOR, APAIRS_UPLO_LOWER, p, nrhs, p, p * p, p, p * nrhs, batch))
  call check(apairs_plan_execute_potrs(plan, c_loc(F), c_loc(X)))
  call check(apairs_plan_destroy(plan))
  do e = 1, int(batch)
    if (e == 7) then
      if (info(e) /= 3) failures = failures + 1
      cycle
    end if
    if (info(e) /= 0) failures = failures + 1
    if (maxval(abs(matmul(S(:, :, e), X(:, :, e)) - R(:, :, e))) > 1e-13_c_double) failures = failures + 1
  end do
  call check(apairs_context_destroy(ctx))
  if (failures /= 0) then
    print '(i0, a)', failures, ' element(s) wrong'
    stop 1
  end if
  print '(a)', 'ok'

contains

  subroutine check(status)
    integer(c_int32_t), intent(in) :: status
    if (status /= APAIRS_SUCCESS) then
      print '(a)', apairs_status_string_f(status) // ': ' // apairs_last_error_f()
      stop 1
    end if
  end subroutine check

end program batched
